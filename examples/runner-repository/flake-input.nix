# In a runner project's flake.nix: boundary as an input, pinned by the project's own flake.lock.
{
  inputs.boundary.url = "github:OWNER/boundary";

  outputs = { self, nixpkgs, boundary, ... }: {
    # `nix run .#runner-sandbox` (as root): the live suite against this repository's runner.
    apps.x86_64-linux.runner-sandbox = {
      type = "app";
      program = toString (nixpkgs.legacyPackages.x86_64-linux.writeShellScript "runner-sandbox" ''
        exec ${boundary.packages.x86_64-linux.default}/bin/boundary run --runner-cmd "node runner.mjs" "$@"
      '');
    };
  };
}
