"""What a job reaches besides files: the canary places a host offers, their server and client, their judge.

May import jobs and the layers below; never scenarios, report or suite. client.py and server.py run inside jobs.
"""
