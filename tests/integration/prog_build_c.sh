#!/bin/bash
# A small C project extracted onto the mount and built there with make:
# the program runs and prints the right answer, a second make has nothing
# to do (timestamps are right), touching one source rebuilds only what
# depends on it, and make clean removes what it built.
# shellcheck source=tests/integration/lib.sh
. "$SRC/tests/integration/lib.sh"
t_need_root
t_need_fuse
t_need_cmd make cc tar
t_init

# the project, written by the test, shipped as a tarball
p=$T/proj-src/calc
mkdir -p "$p/src" "$p/include"
cat >"$p/include/calc.h" <<'H'
int calc_sum(int n);
int calc_fact(int n);
H
cat >"$p/src/sum.c" <<'C'
#include "calc.h"
int calc_sum(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i; return s; }
C
cat >"$p/src/fact.c" <<'C'
#include "calc.h"
int calc_fact(int n) { return n <= 1 ? 1 : n * calc_fact(n - 1); }
C
cat >"$p/src/main.c" <<'C'
#include <stdio.h>
#include "calc.h"
int main(void) { printf("sum=%d fact=%d\n", calc_sum(100), calc_fact(10)); return 0; }
C
cat >"$p/Makefile" <<'M'
CFLAGS = -O2 -Wall -Iinclude
OBJS = build/main.o build/sum.o build/fact.o
calc: $(OBJS)
	$(CC) -o $@ $(OBJS)
build/%.o: src/%.c include/calc.h | build
	$(CC) $(CFLAGS) -c -o $@ $<
build:
	mkdir -p build
clean:
	rm -rf build calc
.PHONY: clean
M
tar -C "$T/proj-src" -czf "$T/calc.tar.gz" calc

mkdir -p "$T/src"
t_mount "$T/src"
cd "$T/src" || exit 1
tar -xzf "$T/calc.tar.gz" || t_fail "cannot extract the project onto the mount"
cd calc || exit 1
if ! make -s >"$T/make1.out" 2>&1; then
	cat "$T/make1.out" >&2
	t_fail "make failed on the mount"
fi
[ "$(./calc)" = "sum=5050 fact=3628800" ] ||
	t_check_fail "the built program prints: $(./calc 2>&1)"

out=$(make 2>&1)
case $out in
*"is up to date"*) ;;
*) t_check_fail "a second make rebuilt something: $out" ;;
esac

# a source newer than its object: only that object and the link run
sleep 1.1
touch src/fact.c
make >"$T/make2.out" 2>&1 || t_check_fail "make after touch failed"
grep -q 'fact.c' "$T/make2.out" || t_check_fail "touching fact.c did not rebuild it"
grep -q 'sum.c' "$T/make2.out" && t_check_fail "touching fact.c rebuilt sum.c"
grep -q -- '-o calc' "$T/make2.out" || t_check_fail "calc was not relinked"
[ "$(./calc)" = "sum=5050 fact=3628800" ] || t_check_fail "program wrong after rebuild"

make -s clean
{ [ ! -e calc ] && [ ! -e build ]; } || t_check_fail "make clean left files behind"
cd "$T" || exit 1
t_umount "$T/src"
t_pass
