{
  description = "buildfleet's gradient demo: three derivations, no nixpkgs needed";

  outputs = { self }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      # make demo writes a fresh ./nonce into its copy, so every run really builds.
      nonce = if builtins.pathExists ./nonce then builtins.readFile ./nonce else "";
      forSystem = system:
        let
          step = name: script: derivation {
            inherit name system nonce;
            builder = "/bin/sh";
            args = [ "-c" script ];
            PATH = "/usr/bin:/bin";
          };
          greeting = step "greeting" "echo 'building greeting'; echo 'hello from gradient' > $out";
          numbers = step "numbers" "echo 'building numbers'; for i in 1 2 3 4 5; do echo $i; done > $out";
          report = step "report" ''
            echo "building report from ${greeting} and ${numbers}"
            cat ${greeting} ${numbers} > $out
          '';
        in { inherit greeting numbers report; };
    in {
      packages = builtins.listToAttrs (map (system: { name = system; value = forSystem system; }) systems);
    };
}
