{
  description = "boundary: live sandbox boundary tests for coding-agent runners";

  # The agents and sandboxes under test come from nixpkgs, so flake.lock pins them: a scheduled
  # workflow proposes each nixpkgs bump as a pull request, and `nix develop -c just runner-sandbox
  # --tools path` tests it before it merges. The first flake.lock is made with `nix flake lock`
  # on a machine that reaches GitHub (README: "The Nix loop").
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      devShells = forAll (pkgs:
        let
          nodejs = pkgs.nodejs_24; # srt declares engines.node >= 22.12.0
          # srt is not in nixpkgs: it is built from the committed npm lockfile (each package fetched by
          # the integrity hash the lockfile records), so its version still moves only with that lockfile.
          toolsModules = pkgs.importNpmLock.buildNodeModules {
            npmRoot = ./boundary/npm/tools;
            inherit nodejs;
            derivationArgs.npm_config_ignore_scripts = "true";
          };
          srt = pkgs.writeShellScriptBin "srt" ''
            exec ${nodejs}/bin/node ${toolsModules}/node_modules/@anthropic-ai/sandbox-runtime/dist/cli.js "$@"
          '';
        in {
          default = pkgs.mkShell {
            packages = [
              (pkgs.python311.withPackages (ps: [ ps.pip ]))
              pkgs.just
              nodejs
              # under test, pinned by flake.lock
              pkgs.opencode
              srt
              pkgs.bubblewrap
              # what the harness and srt use besides
              pkgs.socat
              pkgs.ripgrep
              pkgs.iproute2
              pkgs.strace
              pkgs.git
              pkgs.util-linux
              pkgs.dbus
              pkgs.dnsmasq
              pkgs.systemd # systemd-resolved, for the host-health checks
              pkgs.acl
              pkgs.nix
            ];
            # The suite takes opencode, srt and node from PATH here (the report says so); the Python
            # package and its dependencies go into .venv as everywhere (scripts/setup.sh skips apt here).
            shellHook = ''
              export BOUNDARY_TOOLS=path
            '';
          };
        });
    };
}
