"""What boundary's GitHub Action needs of GitHub: the base branch's last report, and one comment it keeps current."""
