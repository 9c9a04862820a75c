/* Unit test of vprof-report/demangle.c (t_cxx_names.sh): readable C++
 * names and their short forms for narrow columns. Arguments: symbol names
 * of a real C++ program, for the properties every short form must have.
 * Prints one "ok - ..." / "not ok - ..." line per check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

static int fails;
#define CHECK(name, cond) do { if (cond) printf("ok - %s\n", name); \
    else { printf("not ok - %s\n", name); fails++; } } while (0)

/* short form of sym in cols columns equals want (no padding) */
static int fit_is(const char *sym, int cols, const char *want)
{
    char b[1024];
    vpr_dm_fit(b, sizeof b, sym, cols, 0);
    if (strcmp(b, want)) fprintf(stderr, "# %s in %d: got '%s', want '%s'\n", sym, cols, b, want);
    return !strcmp(b, want);
}

#define HASHTABLE_REHASH "_ZNSt10_HashtableINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEESt4pairIKS5_mESaIS8_ENSt8__detail10_Select1stESt8equal_toIS5_ESt4hashIS5_ENSA_18_Mod_range_hashingENSA_20_Default_ranged_hashENSA_20_Prime_rehash_policyENSA_17_Hashtable_traitsILb1ELb0ELb1EEEE9_M_rehashEmRKm"
#define REALLOC_INSERT "_ZNSt6vectorI5RouteSaIS0_EE17_M_realloc_insertIJS0_EEEvN9__gnu_cxx17__normal_iteratorIPS0_S2_EEDpOT_"
#define LAMBDA "_ZZ4mainENKUlRKSt6vectorIiSaIiEEE_clES3_"

int main(int argc, char **argv)
{
    CHECK("demangled as gprof prints it: parameters and const",
          !strcmp(vpr_dm("_ZNK6Router5matchERK7Request"), "Router::match(Request const&) const"));
    CHECK("C names untouched", !strcmp(vpr_dm("merge_buffer_into_index"), "merge_buffer_into_index"));
    CHECK("pseudo-functions untouched", !strcmp(vpr_dm("[libc.so.6]"), "[libc.so.6]"));
    CHECK("not a valid mangled name: as it is", !strcmp(vpr_dm("_Zjunk"), "_Zjunk"));
    CHECK("NULL stays NULL", vpr_dm(NULL) == NULL);
    CHECK("a @VERSION suffix is kept after the demangled name",
          !strcmp(vpr_dm("_ZN6Router5matchEv@@V1"), "Router::match()@@V1"));
    CHECK("the same name twice: the cached text", vpr_dm("_ZN1A1fEv") == vpr_dm("_ZN1A1fEv"));
    int grown = 1;              /* 600 names: the cache grows several times */
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 600 && grown; i++) {
            char nm[64], want[64], fn[16];
            snprintf(fn, sizeof fn, "f%d", i);
            snprintf(nm, sizeof nm, "_ZN1A%zu%sEv", strlen(fn), fn);
            snprintf(want, sizeof want, "A::%s()", fn);
            grown = !strcmp(vpr_dm(nm), want);
        }
    CHECK("cache: 600 names, each looked up twice", grown);

    CHECK("fits: whole name", fit_is("_ZNK6Router5matchERK7Request", 80, "Router::match(Request const&) const"));
    CHECK("18 columns: Router::match(...)", fit_is("_ZNK6Router5matchERK7Request", 18, "Router::match(...)"));
    CHECK("no parameters: ()", fit_is("_ZNK6Router4sizeEv", 14, "Router::size()"));
    CHECK("then the parameters go", fit_is("_ZNK5Route7acceptsESt17basic_string_viewIcSt11char_traitsIcEE", 18,
                                           "Route::accepts"));
    CHECK("30 columns: std::_Hashtable<…>::_M_rehash", fit_is(HASHTABLE_REHASH, 30, "std::_Hashtable<…>::_M_rehash"));
    CHECK("18 columns: …::_M_rehash", fit_is(HASHTABLE_REHASH, 18, "…::_M_rehash"));
    CHECK("a template function's return type goes",
          fit_is(REALLOC_INSERT, 44, "std::vector<…>::_M_realloc_insert<…>(...)"));
    CHECK("a lambda keeps its number", fit_is(LAMBDA, 40, "main::{lambda(...)#1}::operator()(...)"));
    CHECK("operator<< with template arguments", fit_is("_ZN3FoolsIiEERS_T_", 30, "Foo::operator<< <…>(...)"));
    CHECK("operator() and operator[]", fit_is("_ZN1AclEv", 20, "A::operator()()") &&
                                       fit_is("_ZN1AixEi", 14, "A::operator[]"));
    CHECK("conversion operator keeps its type", fit_is("_ZN1AcvSt6vectorIiSaIiEEEv", 28,
                                                       "A::operator std::vector<…>()"));
    CHECK("(anonymous namespace) is a scope like any other",
          fit_is("_ZN12_GLOBAL__N_14spinEl", 33, "(anonymous namespace)::spin(long)") &&
          fit_is("_ZN12_GLOBAL__N_14spinEl", 30, "(anonymous namespace)::spin") &&
          fit_is("_ZN12_GLOBAL__N_14spinEl", 18, "…::spin"));
    CHECK("what still does not fit is cut with ~", fit_is(HASHTABLE_REHASH, 8, "…::_M_r~"));
    CHECK("C names: cut with ~ as before", fit_is("merge_buffer_into_index", 18, "merge_buffer_into~"));
    char b[64];
    int w = vpr_dm_fit(b, sizeof b, "main", 18, 1);
    CHECK("pad: spaces up to the column", w == 18 && !strcmp(b, "main              "));
    w = vpr_dm_fit(b, sizeof b, HASHTABLE_REHASH, 30, 1);
    CHECK("pad counts characters, not bytes (… is 3 bytes)", w == 30 && vpr_cols(b) == 30 && strlen(b) == 32);
    CHECK("a small buffer is not overrun", vpr_dm_fit(b, 8, HASHTABLE_REHASH, 30, 0) >= 0 && strlen(b) < 8);

    /* every name of a real program, every width: never wider than asked,
     * exactly as wide with padding, never empty unless 0 columns */
    int bad = 0;
    for (int i = 1; i < argc; i++)
        for (int cols = 0; cols <= 60; cols++) {
            char o[1024];
            int n = vpr_dm_fit(o, sizeof o, argv[i], cols, 0);
            int p = vpr_dm_fit(o, sizeof o, argv[i], cols, 1);
            if (n > cols || vpr_cols(o) != cols || p != cols || (cols && !n)) {
                if (bad++ < 5) fprintf(stderr, "# %s at %d: %d '%s'\n", argv[i], cols, n, o);
            }
        }
    printf("# %d symbols x 61 widths\n", argc - 1);
    CHECK("every symbol of a C++ program, widths 0..60: fits exactly", bad == 0 && argc > 50);

    vpr_demangle_enable(0);
    CHECK("--no-demangle: linkage names", !strcmp(vpr_dm("_ZNK6Router5matchERK7Request"),
                                                 "_ZNK6Router5matchERK7Request"));
    CHECK("--no-demangle: cut with ~", fit_is("_ZNK6Router5matchERK7Request", 18, "_ZNK6Router5match~"));
    return fails != 0;
}
