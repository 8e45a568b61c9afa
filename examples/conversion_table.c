/* conversion_table.c -- the one-cut conversion costs of SOYBEAN section
   4.2.1, computed by the library for a 300x400 float32 matrix on 2 devices.

   SOYBEAN names the one-cut tilings of a matrix R (row-partitioned), C
   (column-partitioned), r (replicated) and red (partial sums awaiting a
   reduction); ktile writes them S0, S1, R and P.  A conversion costs the
   "ghost area" a device needs minus what it already holds; from partial
   sums, the reduction comes first (DESIGN.md "Conversion cost").  With S
   the size of the matrix and k = 2 devices the table shows the collectives:
   S0 -> S1 is an all-to-all, S(k-1)/k; S0 -> R an all-gather, (k-1)S;
   P -> S0 a reduce-scatter, (k-1)S; P -> R an all-reduce, 2(k-1)S. */
#include <stdio.h>

#define KT_IMPLEMENTATION
#include "../tiling.h"

int main(void) {
    static const char *const from_names[] = {"S0", "S1", "R", "P"};
    static const char *const to_names[] = {"S0", "S1", "R"};
    static const char *const soybean[] = {"R", "C", "r", "red"};
    const int64_t shape[2] = {300, 400};
    const int elem_bytes = 4;
    const double S = 300.0 * 400.0 * elem_bytes;
    int64_t cost[4][3];
    kt_factors f;
    kt_error err;
    int i, j;

    if (kt_factors_parse("2", &f, &err) != KT_OK) {
        fprintf(stderr, "conversion_table: %s\n", err.message);
        return 1;
    }
    for (i = 0; i < 4; i++)
        for (j = 0; j < 3; j++) {
            kt_tiling from, to;
            if (kt_tiling_parse(from_names[i], &from, &err) != KT_OK ||
                kt_tiling_parse(to_names[j], &to, &err) != KT_OK ||
                kt_tiling_conversion_cost(2, shape, elem_bytes, &f, &from,
                                          &to, &cost[i][j], NULL, &err)
                    != KT_OK) {
                fprintf(stderr, "conversion_table: %s\n", err.message);
                return 1;
            }
        }

    printf("One-cut conversion costs of a 300x400 float32 matrix over 2 "
           "devices\n(bytes received by all devices; S = %.0f bytes)\n\n", S);
    printf("%-12s", "from \\ to");
    for (j = 0; j < 3; j++) {
        char head[16];
        snprintf(head, sizeof head, "%s (%s)", to_names[j], soybean[j]);
        printf("%18s", head);
    }
    printf("\n");
    for (i = 0; i < 4; i++) {
        char head[16];
        snprintf(head, sizeof head, "%s (%s)", from_names[i], soybean[i]);
        printf("%-12s", head);
        for (j = 0; j < 3; j++) {
            char cell[32];
            snprintf(cell, sizeof cell, "%lld = %gS", (long long)cost[i][j],
                     (double)cost[i][j] / S);
            printf("%18s", cost[i][j] ? cell : "0");
        }
        printf("\n");
    }
    return 0;
}
