package nixexec

// walkerExpr is the Nix function EvaluateWildcards applies, through `nix eval --expr`, to
// expand wildcards. Its two string arguments are written into the expression as escaped Nix
// string literals (nix 2.8 does not auto-call `--expr` functions with --argstr):
//
//	ref   the locked flake reference (git+file://…?rev=… or path:…?narHash=…)
//	spec  JSON {include: [[seg]], exclude: [[seg]], force: bool, last?: kind},
//	      seg = {k: "lit"|"*"|"#", n: name}
//
// With force it returns every matched derivation and forces its drvPath; without it, it lists
// the matched attribute paths and never evaluates the final values, so that a value that
// fails beyond tryEval's reach can be found by evaluating the listed paths one by one (last
// then tells how the final segment of those literal paths is to be treated). An excluded path
// excludes everything below it.
//
// The result is {counts: [matches per include pattern], entries: [{attr, drv?, error?}]}:
// attr is the name list; drv the drvPath (null when forcing it threw); error a reason when
// the value cannot be listed, throws, or is not a derivation. Throws and failed assertions
// are caught with tryEval; any other evaluation error fails the whole command.
const walkerExpr = `{ ref, spec }:
let
  b = builtins;
  s = b.fromJSON spec;
  root = (b.getFlake ref).outputs;
  ok = e: let r = b.tryEval e; in r.success && r.value;
  evaluates = v: (b.tryEval (b.seq v true)).success;
  isDrv = v: ok ((v.type or null) == "derivation");
  isSet = v: ok (b.isAttrs v);
  names = v: let r = b.tryEval (b.attrNames v); in if r.success then r.value else null;
  thrown = "evaluation failed (throw or assertion)";
  failed = path: why: [ { attr = path; error = why; } ];
  leaf = path: v: let r = b.tryEval v.drvPath; in [ { attr = path; drv = if r.success then r.value else null; } ];
  drvChildren = path: v:
    let ns = names v; in
    if ns == null then failed path "cannot list attributes"
    else b.concatMap (n:
      if !(evaluates v.${n}) then failed (path ++ [ n ]) thrown
      else if isDrv v.${n} then leaf (path ++ [ n ]) v.${n} else [ ]) ns;
  walker = force: let
    final = k: path: v:
      if !force then [ { attr = path; } ]
      else if !(evaluates v) then failed path thrown
      else if isDrv v then leaf path v
      else if k == "*" && isSet v then drvChildren path v
      else if k == "lit" then failed path "not a derivation"
      else [ ];
    kind = seg: s.last or seg.k;
    walk = path: v: segs:
      if segs == [ ] then [ ]
      else let seg = b.head segs; rest = b.tail segs; in
        if !(evaluates v) then failed path thrown
        else if !(isSet v) || isDrv v then [ ]
        else if seg.k == "lit" then
          (if !(ok (v ? ${seg.n})) then [ ]
           else if rest == [ ] then final (kind seg) (path ++ [ seg.n ]) v.${seg.n}
           else walk (path ++ [ seg.n ]) v.${seg.n} rest)
        else
          let ns = names v; in
          if ns == null then failed path "cannot list attributes"
          else b.concatMap (n:
            if rest == [ ] then final (kind seg) (path ++ [ n ]) v.${n}
            else walk (path ++ [ n ]) v.${n} rest) ns;
  in walk [ ] root;
  key = attr: b.toJSON attr;
  prefixes = attr: b.genList (i: key (b.genList (j: b.elemAt attr j) (i + 1))) (b.length attr);
  included = map (walker s.force) s.include;
  excluded = b.listToAttrs (map (e: { name = key e.attr; value = true; })
    (b.concatMap (walker false) s.exclude));
  kept = b.filter (e: !(b.any (k: excluded ? ${k}) (prefixes e.attr))) (b.concatLists included);
  unique = b.attrValues (b.listToAttrs (map (e: { name = key e.attr; value = e; }) kept));
in { counts = map b.length included; entries = unique; }
`
