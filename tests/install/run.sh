#!/bin/sh
# make check-install: install into a temporary prefix, build both
# examples out of tree against it with pkg-config (their own Makefiles), and run
# them through run, converge (the plugin method's observed orders on the
# pendulum), sweep (-j 2, plugins named by the suite) and check-problem; link a
# small program against the shared and the static library.  Exit 0 when all pass.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d /tmp/mbs-install-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }

make -C "$root" -s -j2 install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
mbs=$prefix/bin/mbsbench
echo "check-install: installed into $prefix: mbsbench.pc $(pkg-config --modversion mbsbench)," \
     "$(cd "$prefix" && find include/mbsbench -name '*.h' | wc -l) headers," \
     "$(cd "$prefix/lib" && ls libmbsbench.*| tr '\n' ' ')"

# Out of tree: copies of the example directories, built with their Makefiles.
# Both ways their Makefiles document: PKG_CONFIG_PATH in the environment, or on
# make's command line (which GNU make 4.3 does not pass to $(shell) by itself).
for ex in plugin-problem plugin-method; do
    cp -r "$root/examples/$ex" "$tmp/$ex"
done
make -C "$tmp/plugin-problem" -s >/dev/null ||
    fail "examples/plugin-problem does not build against $prefix (PKG_CONFIG_PATH exported)"
env -u PKG_CONFIG_PATH make -C "$tmp/plugin-method" -s PKG_CONFIG_PATH="$PKG_CONFIG_PATH" \
    >/dev/null || fail "examples/plugin-method does not build with make PKG_CONFIG_PATH=..."
msg=$(env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR=/nonexistent make -C "$tmp/plugin-method" -s 2>&1 >/dev/null) &&
    fail "examples/plugin-method builds without mbsbench.pc"
echo "$msg" | grep -q 'mbsbench.pc not found' ||
    fail "examples/plugin-method without mbsbench.pc: $msg"
fb=$tmp/plugin-problem/fourbar.so
ra=$tmp/plugin-method/rattle.so

# run: the plugin method on the plugin problem
"$mbs" --plugin "$fb" --plugin "$ra" run -p fourbar -m index3/rattle --h 0.001 \
    > "$tmp/run.txt" || fail "run -p fourbar -m index3/rattle"
grep -q '^status  *ok' "$tmp/run.txt" || fail "run: $(cat "$tmp/run.txt")"

# converge: observed orders of the plugin method on the pendulum
order() { awk -v k="$1" '$1 == "order" && $2 == k { print $3 }' "$2"; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }
for m in "index3/rattle 2 2" "index3/symplectic-euler 2 1"; do
    set -- $m
    "$mbs" --plugin "$ra" converge -p pendulum -m "$1" --h0 0.02 --levels 5 > "$tmp/conv.txt" ||
        fail "converge -m $1"
    pq=$(order q "$tmp/conv.txt"); pv=$(order v "$tmp/conv.txt")
    near "$pq" "$2" 0.15 && near "$pv" "$3" 0.15 ||
        fail "$1: observed orders q $pq v $pv, expected $2 and $3"
    echo "check-install: converge $1 on pendulum: observed orders q $pq, v $pv"
done

# sweep: plugins named by the suite (relative to it), two forked workers
mkdir "$tmp/s"
cp "$fb" "$ra" "$tmp/s/"
cat > "$tmp/s/p.suite" <<SUITE
[suite]
name = plugins
plugins = fourbar.so rattle.so
[grid g]
problems = fourbar pendulum
methods = index3/rattle index3/symplectic-euler index1/rk4
h = 0.01 0.005
t_end = 1
SUITE
"$mbs" sweep "$tmp/s/p.suite" -j 2 --out "$tmp/s/res" --no-history > /dev/null ||
    fail "sweep with plugins = ..."
n=$(grep -c '"status":"ok"' "$tmp/s/res/runs.jsonl")
[ "$n" = 12 ] || fail "sweep: $n of 12 runs ok"
"$mbs" summary "$tmp/s/res" > /dev/null || fail "summary of the plugin sweep"
echo "check-install: sweep -j 2 with plugins = fourbar.so rattle.so: $n of 12 runs ok"

# check-problem on the plugin problem
"$mbs" --plugin "$fb" check-problem -p fourbar > "$tmp/cp.txt" || fail "check-problem: $(cat "$tmp/cp.txt")"
echo "check-install: check-problem fourbar: $(tail -1 "$tmp/cp.txt")"

# a program of one's own against the library (run/record API), shared and static
cat > "$tmp/prog.c" <<'PROG'
#include <math.h>
#include <stdio.h>
#include <mbsbench/mbsbench.h>
int main(void)
{
    if (mbs_api_version() != MBS_API_VERSION)
        return 3;
    mbs_run_spec s = {.problem = "pendulum", .method = "index1/rk4", .h = 0.01, .tol = NAN,
                      .t_end = 1.0, .repeat = 0, .measure = 1};
    mbs_record r;
    char err[256];
    if (mbs_run(&s, &r, err, sizeof err) != MBS_OK) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    printf("%s %ld %.3g\n", mbs_status_code(r.status), r.cnt.steps, r.err.q);
    int ok = r.status == MBS_OK && r.cnt.steps == 100 && r.err.q < 1e-6;
    mbs_record_free(&r);
    return ok ? 0 : 1;
}
PROG
cc -std=c11 -Wall -Wextra -Werror -pedantic $(pkg-config --cflags mbsbench) "$tmp/prog.c" \
    -o "$tmp/prog" $(pkg-config --libs mbsbench) \
    -Wl,-rpath,"$(pkg-config --variable=libdir mbsbench)" -lm || fail "linking against libmbsbench.so"
out=$("$tmp/prog") || fail "program against libmbsbench.so: $out"
cc -std=c11 $(pkg-config --cflags mbsbench) "$tmp/prog.c" -o "$tmp/prog-static" \
    "$prefix/lib/libmbsbench.a" $(pkg-config --static --libs-only-other --libs-only-l mbsbench | \
    sed 's/-lmbsbench//') || fail "linking against libmbsbench.a"
out2=$("$tmp/prog-static") || fail "program against libmbsbench.a: $out2"
echo "check-install: a program against libmbsbench.so: $out; against libmbsbench.a: $out2"
echo "check-install: PASS"
