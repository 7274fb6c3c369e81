{
  description = "boundary: live sandbox boundary tests for coding-agent runners";

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-24.05";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAll = f: nixpkgs.lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
    in {
      devShells = forAll (pkgs: {
        default = pkgs.mkShell {
          packages = [
            (pkgs.python311.withPackages (ps: [ ps.pytest ps.pytest-xdist ps.psutil ps.mypy ps.types-psutil ]))
            pkgs.ruff
            pkgs.just
            pkgs.nodejs_20
            pkgs.bubblewrap
            pkgs.socat
            pkgs.ripgrep
            pkgs.iproute2
            pkgs.strace
            pkgs.git
            pkgs.util-linux
            pkgs.dbus
            pkgs.dnsmasq
            pkgs.systemd # systemd-resolved, for the host-health checks
            pkgs.check-jsonschema
            pkgs.nix
          ];
          # The package itself (for its pytest entry point) and the pinned npm tools install
          # from the repository: `just runner-sandbox` runs scripts/setup.sh, which skips apt here.
          shellHook = ''
            [ -d .venv ] || python -m venv --system-site-packages .venv
            source .venv/bin/activate
          '';
        };
      });
    };
}
