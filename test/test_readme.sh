#!/bin/sh
# test_readme.sh -- README.md's figures that the current build computes
# exactly must be what README.md says, so that a change to the cost model
# cannot leave them stale unnoticed (three tables were, once).
#
#   1. every "$ build/ktile ..." line in README.md's code blocks is run
#      (in a temp dir, stderr with stdout; a "$ cat FILE" block writes
#      FILE) and its output compared line by line with the lines shown
#      after it: equal, or, where the README line ends in "...}", equal
#      up to the dots; numbers below 1e-12 in scientific notation (the
#      rounding errors verify reports, which a compiler that fuses
#      multiply-adds changes) only have to be below 1e-12 in both;
#   2. the gradient-sync table is bench/bench_sync's output, row by row
#      (the model outputs; its CPU column is left out of README.md);
#   3. the swap tables' ideal steps are what `ktile swap --search none`
#      reports with memory for everything (every place README.md gives
#      them);
#   4. the table of default factors on nodes: topologies ("The search"):
#      each row's factors and simulated steps, as `ktile sim` prints them.
#
# Environment: KTILE (default build/ktile), KT_WRAP (a command put in front
# of every ktile run, e.g. valgrind).  Ends with "N passed, M failed".

. "$(dirname "$0")/cli_lib.sh"
cli_setup readme
require_ktile
require_python

readme=$(dirname "$0")/../README.md
bench_sync=$(dirname "$0")/../build/bench/bench_sync

python3 - "$readme" "$KTILE" "$bench_sync" "$dir" "${KT_WRAP:-}" <<'EOF'
import json, os, re, shlex, subprocess, sys

readme_path, ktile, bench_sync, work, wrap = sys.argv[1:6]
readme = open(readme_path).read()
ktile = os.path.abspath(ktile)
passed = failed = 0

def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)
        if detail:
            print("  " + detail.replace("\n", "\n  "))

def ktile_run(args):
    """Runs ktile with the shell line args (redirections allowed) in the
    work dir; stdout and stderr together, as a terminal shows them."""
    line = " ".join(shlex.quote(w) for w in shlex.split(wrap) + [ktile])
    line += " " + args
    p = subprocess.run(["sh", "-c", line + " 2>&1"], cwd=work,
                       stdout=subprocess.PIPE, universal_newlines=True)
    return p.stdout.splitlines()

TINY = re.compile(r"-?\d(?:\.\d+)?e-\d+")

def rounding_masked(line):
    """line with every number below 1e-12 in scientific notation as '~'."""
    return TINY.sub(lambda m: "~" if abs(float(m.group())) < 1e-12
                    else m.group(), line)

def same_line(want, got):
    want, got = rounding_masked(want), rounding_masked(got)
    if want.endswith("...}"):
        return got.startswith(want[:-4])
    return want == got

# 1. the shell sessions in the code blocks
blocks, block = [], None
for line in readme.splitlines():
    if line.startswith("```"):
        if block is None:
            block = []
        else:
            blocks.append("\n".join(block))
            block = None
    elif block is not None:
        block.append(line)
sessions = 0
for block in blocks:
    lines = block.splitlines()
    if not lines or not lines[0].startswith("$ "):
        continue
    i = 0
    while i < len(lines):
        cmd = lines[i][2:]
        j = i + 1
        while j < len(lines) and not lines[j].startswith("$ "):
            j += 1
        shown = lines[i + 1:j]
        if cmd.startswith("cat "):
            with open(os.path.join(work, cmd[4:].strip()), "w") as f:
                f.write("\n".join(shown) + "\n")
        elif not cmd.startswith("build/ktile "):
            check(False, "README's session line `$ %s`: this test runs only "
                  "build/ktile and cat" % cmd)
        else:
            sessions += 1
            got = ktile_run(cmd[len("build/ktile "):])
            ok = len(got) == len(shown) and all(
                same_line(w, g) for w, g in zip(shown, got))
            diff = "\n".join("README: %s\nktile:  %s" % (w, g)
                             for w, g in zip(shown + [""] * len(got),
                                             got + [""] * len(shown))
                             if not same_line(w, g))
            check(ok, "README's `%s` prints something else" % cmd, diff)
        i = j
check(sessions >= 7, "README's sessions: %d found, expected 7 or more" %
      sessions)

# 2. the gradient-sync table: each row of bench_sync's, in README's form
#    (network instead of topology, no CPU column)
rows = 0
if not os.access(bench_sync, os.X_OK):
    check(False, bench_sync + " is not built (make all)")
else:
    out = subprocess.run([bench_sync], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 14 or not re.match(r"\d+$", cells[1]):
            continue
        (model, dev, topo, grads, mb, back, trad, wfbp, cap, dp, r1, r2, r3,
         _cpu) = cells
        net = "400 Gb/s" if topo.endswith("400Gb") else "25 Gb/s"
        cap_size, cap_ms = cap.rsplit(None, 1)
        dp_ms, buckets = dp.split("(")
        row = "| %s |" % " | ".join([
            model, dev, net, grads, mb, back, trad, wfbp,
            "%s, %s" % (" ".join(cap_size.split()), cap_ms),
            "%s (%s)" % (dp_ms.strip(), buckets.strip(" )")), r1, r2, r3])
        rows += 1
        check(row in readme, "README's sync table lacks bench_sync's row",
              row)
check(rows == 16, "bench_sync printed %d rows, README's table has 16" % rows)

# 3. the swap tables' ideal steps
def ideal(spec):
    got = ktile_run("swap --model %s --memory 1000G --search none --json" %
                    spec)
    try:
        return json.loads(got[-1])["ideal_seconds"]
    except (IndexError, ValueError, KeyError):
        check(False, "ktile swap --model %s printed no ideal" % spec,
              "\n".join(got))
        return float("nan")

# each pattern matches every place README.md gives that model's ideal
for spec, pattern in [
        ("wresnet:depth=152,widen=10",
         r"`wresnet:depth=152,widen=10` \(ideal (\d+\.\d+) s\)|"
         r"best step after [^|]*\(ideal (\d+\.\d+) s\)"),
        ("rnn:layers=8,hidden=8192",
         r"reaches the ideal (\d+\.\d+) s")]:
    want = "%.3f" % ideal(spec)
    shown = [next(g for g in m.groups() if g)
             for m in re.finditer(pattern, readme)]
    check(len(shown) >= 1 and all(x == want for x in shown),
          "README's ideal for %s: %s, ktile: %s" % (spec, shown, want))
    print("%s: the ideal %s s in %d places" % (spec, want, len(shown)))
table_ideals = ["%.2f ms" % (1e3 * ideal(
    "wresnet:depth=152,widen=1,batch=%d,infer=1" % b)) for b in (1, 16, 32, 64)]
row = "| ideal | " + " | ".join(table_ideals) + " |"
check(row in readme, "README's Table 5.2 lacks the ideal row", row)

# 4. the simulated steps of the default factors on nodes: topologies
#    ("The search"): each row's two steps, as `ktile sim` prints them
def sim_step(args):
    """The factors and step `ktile sim` prints for the MLP on args."""
    got = ktile_run("sim --model mlp:layers=4,hidden=1024,batch=64 " + args)
    fac = [l.split("factors ")[1].rstrip(")") for l in got
           if l.startswith("devices ") and "factors " in l]
    steps = [l.split()[1] + " us" for l in got if l.startswith("step ")]
    return (fac[0] if fac else "?", steps[0] if steps else "?")

table_rows = re.findall(r"^\| `nodes:(\d+)x(\d+):300G:25G` \| ([\d,]+) \| "
                        r"([\d.]+ us) \| ([\d,]+) \| ([\d.]+ us) \|$",
                        readme, re.M)
check(len(table_rows) == 5, "README's factors table: %d rows, expected 5" %
      len(table_rows))
for m, g, new_f, new_step, old_f, old_step in table_rows:
    topo = "--devices %d --topology nodes:%sx%s:300G:25G" % (
        int(m) * int(g), m, g)
    got = sim_step(topo) + sim_step(topo + " --factors " + old_f)
    want = (new_f, new_step, old_f, old_step)
    check(got == want, "README's factors row nodes:%sx%s: %s, ktile: %s" %
          (m, g, want, got))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF
