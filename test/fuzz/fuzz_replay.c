/* fuzz_replay.c -- runs a libFuzzer harness over saved inputs without
   libFuzzer: every file named, and every file in a directory named, once
   through LLVMFuzzerTestOneInput.  Linked with one harness, it lets a
   sanitizer libFuzzer cannot be combined with well (ThreadSanitizer:
   libFuzzer's own coverage counters race) check a corpus, and it runs
   where clang's fuzzer runtime is missing.  A broken invariant aborts
   (fuzz_common.h); otherwise it ends with the test runner's line, one
   pass per input. */
#define _POSIX_C_SOURCE 200809L /* opendir, stat */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One input file through the harness; 0 when it cannot be read. */
static int replay_file(const char *path) {
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    long n;
    if (!f) return 0;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = (uint8_t *)malloc((size_t)n + 1))) {
        fclose(f);
        return 0;
    }
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 1;
}

int main(int argc, char **argv) {
    int i, replayed = 0, unreadable = 0;
    for (i = 1; i < argc; i++) {
        struct stat st;
        DIR *dir;
        struct dirent *e;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[i]);
            unreadable++;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[i])) replayed++;
            else unreadable++;
            continue;
        }
        if (!(dir = opendir(argv[i]))) {
            unreadable++;
            continue;
        }
        while ((e = readdir(dir)) != NULL) {
            char path[4096];
            if (e->d_name[0] == '.') continue;
            snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
            if (replay_file(path)) replayed++;
            else unreadable++;
        }
        closedir(dir);
    }
    printf("%d inputs replayed\n%d passed, %d failed\n", replayed, replayed,
           unreadable);
    return unreadable != 0;
}
