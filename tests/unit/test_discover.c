/* test_discover.c — unit tests of src/discover.c (reference §3.2). */
#include "config.h"

#include "suites.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <yajl/yajl_tree.h>
#include <zlib.h>

#include "kerndiff/discover.h"
#include "kerndiff/error.h"

/* ------------------------------------------------------------------------ */
/* scratch trees                                                            */

#define TRACE_DOC "{\"traceEvents\": []}"

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    ck_assert_ptr_nonnull(p);
    return p;
}

static char *cat3(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s%s%s", a, b, c);
    return p;
}

static char *make_root(void)
{
    char tmpl[] = "/tmp/kd_discover_XXXXXX";
    char *d = mkdtemp(tmpl);
    ck_assert_msg(d != NULL, "mkdtemp: %s", strerror(errno));
    return xstrdup(d);
}

static void rm_rf(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode)) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *de;
            while ((de = readdir(d)) != NULL) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                    continue;
                char *child = cat3(path, "/", de->d_name);
                rm_rf(child);
                free(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* mkdir -p of the directories of root/rel (not its last component) */
static void make_parents(const char *root, const char *rel)
{
    char *p = cat3(root, "/", rel);
    for (char *s = p + strlen(root) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0)
                ck_assert_msg(errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
            *s = '/';
        }
    }
    free(p);
}

static void set_mtime(const char *path, long sec)
{
    struct timespec ts[2] = {{sec, 0}, {sec, 0}};
    ck_assert_msg(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) == 0, "utimensat %s: %s",
                  path, strerror(errno));
}

/* root/rel with content, mtime = sec (seconds since the epoch) */
static void put_file(const char *root, const char *rel, const char *content, long sec)
{
    make_parents(root, rel);
    char *p = cat3(root, "/", rel);
    FILE *f = fopen(p, "w");
    ck_assert_msg(f != NULL, "fopen %s: %s", p, strerror(errno));
    fputs(content, f);
    fclose(f);
    set_mtime(p, sec);
    free(p);
}

static void put_trace(const char *root, const char *rel, long sec)
{
    put_file(root, rel, TRACE_DOC, sec);
}

/* A trace whose header declares distributedInfo.rank (and world_size). */
static char *ranked_doc(long rank, long world)
{
    char *p = malloc(160);
    ck_assert_ptr_nonnull(p);
    snprintf(p, 160,
             "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %ld, "
             "\"world_size\": %ld}, \"traceEvents\": []}",
             rank, world);
    return p;
}

static void put_ranked(const char *root, const char *rel, long rank, long world, long sec)
{
    char *doc = ranked_doc(rank, world);
    put_file(root, rel, doc, sec);
    free(doc);
}

/* root/rel gzip-compressed (zlib's gzopen / gzwrite), mtime = sec */
static void put_gz(const char *root, const char *rel, const char *content, long sec)
{
    make_parents(root, rel);
    char *p = cat3(root, "/", rel);
    gzFile f = gzopen(p, "wb");
    ck_assert_msg(f != NULL, "gzopen %s", p);
    ck_assert_int_eq(gzwrite(f, content, (unsigned)strlen(content)), (int)strlen(content));
    ck_assert_int_eq(gzclose(f), Z_OK);
    set_mtime(p, sec);
    free(p);
}

static void put_dir(const char *root, const char *rel)
{
    char *r = cat3(rel, "/", "x");
    make_parents(root, r);
    free(r);
}

/* The resolved paths relative to root, joined by ",". */
static char *rel_list(const kd_trace_set *s, const char *root)
{
    size_t rl = strlen(root);
    size_t cap = 1;
    for (size_t i = 0; i < s->n; i++)
        cap += strlen(s->files[i].path) + 1;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    out[0] = '\0';
    for (size_t i = 0; i < s->n; i++) {
        const char *p = s->files[i].path;
        if (strncmp(p, root, rl) == 0 && p[rl] == '/')
            p += rl + 1;
        if (i > 0)
            strcat(out, ",");
        strcat(out, p);
    }
    return out;
}

/* discover(root[/sub]) must succeed with exactly `want` (relative to root). */
static void expect_set(const char *root, const char *want, const char *how_part)
{
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    kd_status st = kd_discover_traces(root, &s, &err);
    ck_assert_msg(st == KD_OK, "discover %s: %d %s", root, (int)st, err.msg);
    char *got = rel_list(&s, root);
    ck_assert_str_eq(got, want);
    ck_assert_ptr_nonnull(s.how);
    ck_assert_ptr_null(strchr(s.how, '\n'));
    if (how_part)
        ck_assert_msg(strstr(s.how, how_part) != NULL, "how \"%s\" lacks \"%s\"", s.how, how_part);
    free(got);
    kd_trace_set_free(&s);
}

/* ------------------------------------------------------------------------ */
/* the pure functions                                                       */

START_TEST(test_trace_file_name)
{
    ck_assert_int_eq(kd_is_trace_file_name("a.trace.json"), 1);
    ck_assert_int_eq(kd_is_trace_file_name("a.TRACE.JSON.GZ"), 1);
    ck_assert_int_eq(kd_is_trace_file_name("host.123.pt.trace.json"), 1);
    ck_assert_int_eq(kd_is_trace_file_name("host.123.pt.trace.json.tmp"), 1);
    ck_assert_int_eq(kd_is_trace_file_name("x.json"), -1);
    ck_assert_int_eq(kd_is_trace_file_name("x.JSON.gz"), -1);
    ck_assert_int_eq(kd_is_trace_file_name("server_args.json"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("Server_Args.json"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("metadata.json"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("config.json"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("config.json.gz"), -1);
    ck_assert_int_eq(kd_is_trace_file_name("x.trace.json.bak"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("x.txt"), 0);
    ck_assert_int_eq(kd_is_trace_file_name("x.gz"), 0);
    ck_assert_int_eq(kd_is_trace_file_name(""), 0);
}
END_TEST

START_TEST(test_parse_tp_rank)
{
    ck_assert_int_eq(kd_parse_tp_rank("x_tp0.trace.json"), 0);
    ck_assert_int_eq(kd_parse_tp_rank("x-TP3-y.json"), 3);
    ck_assert_int_eq(kd_parse_tp_rank("tp12"), 12);
    ck_assert_int_eq(kd_parse_tp_rank("tp07.json"), 7);
    ck_assert_int_eq(kd_parse_tp_rank("mapping-TP-0.trace.json"), 0);
    ck_assert_int_eq(kd_parse_tp_rank("xtp-5.json"), 5); /* only TP-(\d+) */
    ck_assert_int_eq(kd_parse_tp_rank("stp1.json"), -1); /* no delimiter before tp */
    ck_assert_int_eq(kd_parse_tp_rank("tp1a.json"), -1); /* bad trailer */
    ck_assert_int_eq(kd_parse_tp_rank("a_tp1a_tp2.json"), 2);
    ck_assert_int_eq(kd_parse_tp_rank("rank1.trace.json"), 1);
    ck_assert_int_eq(kd_parse_tp_rank("run_RANK4"), 4);
    ck_assert_int_eq(kd_parse_tp_rank("trace_worker7-x.json"), 7);
    ck_assert_int_eq(kd_parse_tp_rank("foo_TP00-gpu.json"), 0);
    /* first pattern in order wins: tp before TP- before rank before worker */
    ck_assert_int_eq(kd_parse_tp_rank("worker1_rank2_TP-3_tp4.json"), 4);
    ck_assert_int_eq(kd_parse_tp_rank("worker1_rank2_TP-3.json"), 3);
    ck_assert_int_eq(kd_parse_tp_rank("worker1_rank2.json"), 2);
    ck_assert_int_eq(kd_parse_tp_rank("xrank2.json"), -1);
    ck_assert_int_eq(kd_parse_tp_rank("ran\xE2\x84\xAA" "2.json"), 2); /* KELVIN SIGN ~ k */
    ck_assert_int_eq(kd_parse_tp_rank("rank99999999999999999999999.json"), -1);
    ck_assert_int_eq(kd_parse_tp_rank("tp99999999999999999999_rank3.json"), 3);
    ck_assert_int_eq(kd_parse_tp_rank("tp"), -1);
    ck_assert_int_eq(kd_parse_tp_rank("plain.trace.json"), -1);
    ck_assert_int_eq(kd_parse_tp_rank(""), -1);
}
END_TEST

START_TEST(test_parse_stage)
{
    ck_assert_int_eq(kd_parse_stage("a/prefill/x.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("a/EXTEND/x.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("run-prefill-1.trace.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("x_Extend.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("a/b-decode/x.json"), KD_STAGE_DECODE);
    ck_assert_int_eq(kd_parse_stage("Decode/x.json"), KD_STAGE_DECODE);
    ck_assert_int_eq(kd_parse_stage("x_decode.trace.json"), KD_STAGE_DECODE);
    ck_assert_int_eq(kd_parse_stage("x_prefill_decode.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("decode/x_prefill.json"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("mi300_sglang_qwen3-8b_prefilldecode.json.gz"),
                     KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("predecode/decoder/x.decode.json"), KD_STAGE_ALL);
    ck_assert_int_eq(kd_parse_stage("prefilled/extended/x.json"), KD_STAGE_ALL);
    /* only the last 6 components count; "." and empty ones are not components */
    ck_assert_int_eq(kd_parse_stage("/prefill/a/b/c/d/e/f"), KD_STAGE_ALL);
    ck_assert_int_eq(kd_parse_stage("/prefill/a/b/c/d/e"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("prefill/./a//b/c/d/./e"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_parse_stage("a/decode/"), KD_STAGE_DECODE);
    ck_assert_int_eq(kd_parse_stage("x.trace.json"), KD_STAGE_ALL);
    ck_assert_int_eq(kd_parse_stage(""), KD_STAGE_ALL);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* file and error inputs                                                    */

START_TEST(test_file_input)
{
    char *root = make_root();
    put_file(root, "odd-decode.bin", "not even json", 100);
    char *p = cat3(root, "/", "odd-decode.bin");
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(p, &s, &err), KD_OK);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.files[0].path, p);
    ck_assert_int_eq(s.files[0].stage, KD_STAGE_DECODE);
    ck_assert_str_eq(s.how, "file");
    kd_trace_set_free(&s);
    ck_assert_ptr_null(s.files);
    ck_assert_uint_eq(s.n, 0);
    kd_trace_set_free(&s); /* twice is harmless */
    free(p);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_missing_path)
{
    char *root = make_root();
    char *p = cat3(root, "/", "nope.trace.json");
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(p, &s, &err), KD_EINPUT);
    ck_assert_int_eq(err.status, KD_EINPUT);
    char *want = cat3(p, ": no such file or directory", "");
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(s.files);
    ck_assert_uint_eq(s.n, 0);
    kd_trace_set_free(&s);
    free(want);
    free(p);
    /* a path through a regular file */
    put_file(root, "f", "x", 100);
    p = cat3(root, "/", "f/x.json");
    ck_assert_int_eq(kd_discover_traces(p, &s, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, ": no such file or directory"));
    free(p);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_empty_dir)
{
    char *root = make_root();
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    char *want = cat3(root,
                      ": no trace files in directory (looked for *.trace.json[.gz], "
                      "*.pt.trace.json*, or *.json[.gz] holding traceEvents)",
                      "");
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_str_eq(err.msg, want);
    /* still none: non-trace files, empty sub-directories */
    put_file(root, "server_args.json", TRACE_DOC, 100);
    put_file(root, "sub/config.json", TRACE_DOC, 100);
    put_file(root, "sub/notes.txt", "hello", 100);
    put_dir(root, "empty/deeper");
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(s.files);
    free(want);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_unreadable)
{
    if (geteuid() == 0) {
        printf("test_unreadable: skipped (running as root, permissions are not enforced)\n");
        return;
    }
    char *root = make_root();
    put_trace(root, "a.trace.json", 100);
    char *p = cat3(root, "/", "a.trace.json");
    chmod(p, 0);
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_ne(kd_discover_traces(p, &s, &err), KD_OK);
    ck_assert_ptr_nonnull(strstr(err.msg, "permission denied"));
    chmod(root, 0);
    ck_assert_int_ne(kd_discover_traces(root, &s, &err), KD_OK);
    ck_assert_ptr_nonnull(strstr(err.msg, root));
    chmod(root, 0700);
    chmod(p, 0600);
    /* an unreadable sub-directory is skipped, as pathlib's rglob does */
    put_trace(root, "x/prefill/a.trace.json", 100);
    put_trace(root, "y/decode/b.trace.json", 100);
    char *y = cat3(root, "/", "y");
    unlink(p);
    chmod(y, 0);
    expect_set(root, "x/prefill/a.trace.json", NULL);
    chmod(y, 0700);
    free(y);
    free(p);
    rm_rf(root);
    free(root);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* directory resolution                                                     */

START_TEST(test_direct_traces)
{
    /* three captures of rank 0: the newest (reference §3.2 step 8) */
    char *root = make_root();
    put_ranked(root, "a.trace.json", 0, 1, 100);
    put_ranked(root, "b.trace.json", 0, 1, 200);
    put_ranked(root, "c.pt.trace.json.gz", 0, 1, 150);
    /* a newer trace below and staged ones are ignored: direct traces exist */
    put_trace(root, "sub/d.trace.json", 900);
    put_trace(root, "prefill/e.trace.json", 900);
    expect_set(root, "b.trace.json", "directory: 1 trace file");
    expect_set(root, "b.trace.json", "newest per stage of 3 (one rank, several runs)");
    /* a trailing slash and "." components: Python's Path(dir) / name */
    char *r2 = cat3(root, "/./", "");
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(r2, &s, &err), KD_OK);
    ck_assert_uint_eq(s.n, 1);
    char *want = cat3(root, "/", "b.trace.json");
    ck_assert_str_eq(s.files[0].path, want);
    kd_trace_set_free(&s);
    free(want);
    free(r2);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_newest_trace_dir)
{
    char *root = make_root();
    put_trace(root, "run1/a.trace.json", 100);
    put_trace(root, "run1/d.trace.json", 190);
    put_ranked(root, "run2/b.trace.json", 0, 1, 200);
    put_ranked(root, "run2/c.trace.json", 0, 1, 150);
    put_file(root, "run3/server_args.json", TRACE_DOC, 999);
    expect_set(root, "run2/b.trace.json", "directory: newest trace dir run2, 1 trace file");
    /* the newest dir may be deeper; only its direct files count */
    put_trace(root, "run4/x/y_tp1.trace.json", 300);
    put_trace(root, "run4/x/y_tp0.trace.json", 250);
    put_trace(root, "run4/x/z/y_tp0.trace.json", 260);
    expect_set(root, "run4/x/y_tp0.trace.json",
               "directory: newest trace dir run4/x, 1 trace file, rank 0 of 2 files");
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_stage_subdirs)
{
    char *root = make_root();
    put_trace(root, "decode/rank0.trace.json", 100);
    put_trace(root, "decode/rank1.trace.json", 300);
    put_trace(root, "prefill/rank0.trace.json", 200);
    put_trace(root, "prefill/rank1.trace.json", 400);
    expect_set(root, "prefill/rank0.trace.json,decode/rank0.trace.json",
               "directory: 2 trace files from prefill/ and decode/ sub-directories, "
               "rank 0 of 4 files");
    /* a stage-all trace elsewhere in the tree joins, last */
    put_trace(root, "other/deep/rank0.trace.json", 50);
    expect_set(root,
               "prefill/rank0.trace.json,decode/rank0.trace.json,other/deep/rank0.trace.json",
               "from prefill/, decode/ and other/deep/ sub-directories");
    rm_rf(root);
    free(root);

    /* a staged input dir name makes even plain sub-directories staged */
    root = make_root();
    put_ranked(root, "run-decode/a/x.trace.json", 0, 1, 100);
    put_ranked(root, "run-decode/b/y.trace.json", 0, 1, 200);
    char *p = cat3(root, "/", "run-decode");
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(p, &s, &err), KD_OK);
    ck_assert_uint_eq(s.n, 1);
    char *want = cat3(p, "/", "b/y.trace.json");
    ck_assert_str_eq(s.files[0].path, want);
    ck_assert_int_eq(s.files[0].stage, KD_STAGE_DECODE);
    ck_assert_ptr_nonnull(strstr(s.how, "from b/ sub-directory"));
    kd_trace_set_free(&s);
    free(want);
    free(p);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_merged)
{
    char *root = make_root();
    put_trace(root, "merged-all.trace.json", 300);
    put_ranked(root, "a.trace.json", 0, 1, 100);
    put_ranked(root, "Merged-b.trace.json", 0, 1, 200); /* case matters: kept */
    expect_set(root, "Merged-b.trace.json", "1 merged- file dropped");
    rm_rf(root);
    free(root);

    root = make_root();
    put_ranked(root, "merged-1.trace.json", 0, 1, 100);
    put_ranked(root, "merged-2.trace.json", 0, 1, 200);
    expect_set(root, "merged-2.trace.json", "directory: 1 trace file");
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_rank_filter)
{
    char *root = make_root();
    put_trace(root, "x_tp0.trace.json", 100);
    put_trace(root, "x_tp1.trace.json", 300);
    put_trace(root, "norank.trace.json", 400);
    expect_set(root, "x_tp0.trace.json", "rank 0 of 3 files");
    rm_rf(root);
    free(root);

    root = make_root();
    put_trace(root, "mapping-TP-1.trace.json", 300);
    put_trace(root, "mapping-TP-0.trace.json", 100);
    expect_set(root, "mapping-TP-0.trace.json", "rank 0 of 2 files");
    rm_rf(root);
    free(root);

    root = make_root();
    put_trace(root, "w-worker0.trace.json", 100);
    put_trace(root, "w-worker2.trace.json", 300);
    expect_set(root, "w-worker0.trace.json", NULL);
    rm_rf(root);
    free(root);

    /* no rank 0: the lowest rank */
    root = make_root();
    put_trace(root, "rank2.trace.json", 300);
    put_trace(root, "rank1.trace.json", 100);
    put_trace(root, "rank3.trace.json", 200);
    put_trace(root, "plain.trace.json", 500);
    expect_set(root, "rank1.trace.json", "rank 1 of 4 files");
    rm_rf(root);
    free(root);

    /* no rank anywhere: nothing dropped by the filter */
    root = make_root();
    put_trace(root, "a.trace.json", 300);
    put_trace(root, "b-decode.trace.json", 100);
    expect_set(root, "b-decode.trace.json,a.trace.json", NULL);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_newest_per_stage_and_order)
{
    char *root = make_root();
    put_ranked(root, "a-prefill.trace.json", 0, 2, 100);
    put_ranked(root, "z-prefill.trace.json", 0, 2, 200);
    put_ranked(root, "c-decode.trace.json", 0, 2, 150);
    put_ranked(root, "a-decode.trace.json", 0, 2, 160);
    put_ranked(root, "e.trace.json", 0, 2, 10);
    put_ranked(root, "f.trace.json", 0, 2, 20);
    put_ranked(root, "0.trace.json", 0, 2, 5);
    put_ranked(root, "r1.trace.json", 1, 2, 900); /* another rank: dropped */
    expect_set(root, "z-prefill.trace.json,a-decode.trace.json,f.trace.json",
               "directory: 3 trace files, rank 0 of 8 files, from distributedInfo, "
               "newest per stage of 7 (one rank, several runs)");
    rm_rf(root);
    free(root);

    /* equal mtimes: the path decides (deterministic) */
    root = make_root();
    put_ranked(root, "b.trace.json", 0, 1, 100);
    put_ranked(root, "a.trace.json", 0, 1, 100);
    expect_set(root, "b.trace.json", NULL);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_non_trace_json)
{
    char *root = make_root();
    put_file(root, "server_args.json", TRACE_DOC, 900);
    put_file(root, "CONFIG.json", TRACE_DOC, 900);
    put_file(root, "metadata.json", TRACE_DOC, 900);
    put_file(root, "notes.json", "{\"foo\": 1}", 900);
    put_file(root, "events.json", "{\"traceEvents\": {}}", 900);
    put_file(root, "empty.json", "[]", 900);
    put_file(root, "bad.json", "not json", 900);
    put_file(root, "readme.txt", TRACE_DOC, 900);
    put_dir(root, "dir.trace.json");
    put_trace(root, "sub/t.trace.json", 100);
    expect_set(root, "sub/t.trace.json", "newest trace dir sub");
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_probed_json)
{
    char *root = make_root();
    put_file(root, "server_args.json", TRACE_DOC, 900);
    put_file(root, "notes.json", "{\"foo\": 1}", 900);
    put_file(root, "dict-prefill.json", "{\"traceEvents\": [{\"ph\": \"X\"}]}", 100);
    put_file(root, "list-decode.json", "[{\"ph\": \"X\"}, {\"ph\": \"M\"}]", 100);
    expect_set(root, "dict-prefill.json,list-decode.json", "directory: 2 trace files");
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_symlinks)
{
    char *root = make_root();
    char *other = make_root();
    put_trace(other, "prefill/a.trace.json", 100);
    put_trace(other, "real.trace.json", 100);
    /* a symlinked directory is not followed; a loop ends */
    char *l1 = cat3(root, "/", "linked");
    ck_assert_int_eq(symlink(other, l1), 0);
    put_dir(root, "sub");
    char *l2 = cat3(root, "/", "sub/up");
    ck_assert_int_eq(symlink("..", l2), 0);
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no trace files in directory"));
    /* a symlinked file is a file (pathlib is_file follows links) */
    char *target = cat3(other, "/", "real.trace.json");
    char *l3 = cat3(root, "/", "sub/f.trace.json");
    ck_assert_int_eq(symlink(target, l3), 0);
    expect_set(root, "sub/f.trace.json", "newest trace dir sub");
    /* the input itself may be a symlink to a directory */
    char *want = cat3(l1, "/", "real.trace.json");
    ck_assert_int_eq(kd_discover_traces(l1, &s, &err), KD_OK);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_str_eq(s.files[0].path, want);
    kd_trace_set_free(&s);
    free(want);
    free(target);
    free(l1);
    free(l2);
    free(l3);
    rm_rf(root);
    rm_rf(other);
    free(root);
    free(other);
}
END_TEST


/* ------------------------------------------------------------------------ */
/* ranks: distributedInfo, then the name; never a guess                     */

START_TEST(test_parse_rank_name)
{
    /* the reference's patterns first: the same answers */
    ck_assert_int_eq(kd_parse_rank_name("x_tp0.trace.json"), 0);
    ck_assert_int_eq(kd_parse_rank_name("mapping-TP-0.trace.json"), 0);
    ck_assert_int_eq(kd_parse_rank_name("run-TP-3-decode.trace.json"), 3); /* -TP-N- */
    ck_assert_int_eq(kd_parse_rank_name("rank1.trace.json"), 1);
    ck_assert_int_eq(kd_parse_rank_name("trace_worker7-x.json"), 7);
    ck_assert_int_eq(kd_parse_rank_name("worker1_rank-2.json"), 1);
    ck_assert_int_eq(kd_parse_rank_name("rank-2_tp5.json"), 5);
    /* rank-N and rank_N, which the reference does not know */
    ck_assert_int_eq(kd_parse_tp_rank("trace_filter_sampled_rank-0.json.gz"), -1);
    ck_assert_int_eq(kd_parse_rank_name("trace_filter_sampled_rank-0.json.gz"), 0);
    ck_assert_int_eq(kd_parse_rank_name("trace_filter_sampled_rank-1.json.gz"), 1);
    ck_assert_int_eq(kd_parse_rank_name("ns_resolution_rank-0.pt.trace.json.gz"), 0);
    ck_assert_int_eq(kd_parse_rank_name("rank_3.json"), 3);
    ck_assert_int_eq(kd_parse_rank_name("RANK_12-x.json"), 12);
    ck_assert_int_eq(kd_parse_rank_name("a-rank-4"), 4);
    ck_assert_int_eq(kd_parse_rank_name("xrank-3.json"), -1);  /* no delimiter before */
    ck_assert_int_eq(kd_parse_rank_name("rank-3a.json"), -1);  /* bad trailer */
    ck_assert_int_eq(kd_parse_rank_name("rank--3.json"), -1);
    ck_assert_int_eq(kd_parse_rank_name("rank-.json"), -1);
    ck_assert_int_eq(kd_parse_rank_name("rank-99999999999999999999999.json"), -1);
    ck_assert_int_eq(kd_parse_rank_name("ranked-3.json"), -1);
    /* tensorboard_trace_handler names carry no rank */
    ck_assert_int_eq(kd_parse_rank_name("host_1234.1700000000000.pt.trace.json.gz"), -1);
    ck_assert_int_eq(kd_parse_rank_name(""), -1);
    ck_assert_int_eq(kd_parse_rank_name(NULL), -1);
}
END_TEST

/* discover(root) must succeed with one file: rel, of rank, from from. */
static void expect_one(const char *root, const char *rel, long rank, const char *from,
                       long world, const char *how_part)
{
    expect_set(root, rel, how_part);
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_OK);
    ck_assert_uint_eq(s.n, 1);
    ck_assert_int_eq(s.files[0].rank, rank);
    if (from)
        ck_assert_str_eq(s.files[0].rank_from, from);
    else
        ck_assert_ptr_null(s.files[0].rank_from);
    ck_assert_int_eq(s.files[0].world_size, world);
    kd_trace_set_free(&s);
}

START_TEST(test_rank_names_in_dir)
{
    static const char *const names[][2] = {
        {"trace_filter_sampled_rank-0.json", "trace_filter_sampled_rank-1.json"},
        {"rank_0.json", "rank_1.json"},
        {"run_rank0.trace.json", "run_rank1.trace.json"},
        {"srv-TP-0-decode.trace.json", "srv-TP-1-decode.trace.json"},
        {"x_tp0.trace.json", "x_tp1.trace.json"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *root = make_root();
        put_trace(root, names[i][0], 100);
        put_trace(root, names[i][1], 200); /* rank 1 is newer */
        expect_one(root, names[i][0], 0, "file name", -1,
                   "rank 0 of 2 files, from the file name");
        rm_rf(root);
        free(root);
    }
}
END_TEST

START_TEST(test_rank_from_distributed_info)
{
    /* rank 0 among ranks 1, 0, 2 whatever the mtimes: it is the oldest */
    char *root = make_root();
    put_ranked(root, "host_11.1700000000001.pt.trace.json", 1, 3, 300);
    put_ranked(root, "host_10.1700000000000.pt.trace.json", 0, 3, 100);
    put_ranked(root, "host_12.1700000000002.pt.trace.json", 2, 3, 200);
    expect_one(root, "host_10.1700000000000.pt.trace.json", 0, "distributedInfo", 3,
               "directory: 1 trace file, rank 0 of 3 files, from distributedInfo");
    rm_rf(root);
    free(root);

    /* distributedInfo beats the name */
    root = make_root();
    put_ranked(root, "trace_rank-0.json", 1, 2, 100);
    put_ranked(root, "trace_rank-1.json", 0, 2, 50);
    expect_one(root, "trace_rank-1.json", 0, "distributedInfo", 2, "from distributedInfo");
    rm_rf(root);
    free(root);

    /* no rank 0: the lowest; files without a rank go (reference) */
    root = make_root();
    put_ranked(root, "a.trace.json", 5, 8, 100);
    put_ranked(root, "b.trace.json", 3, 8, 100);
    put_trace(root, "c.trace.json", 900);
    expect_one(root, "b.trace.json", 3, "distributedInfo", 8, "rank 3 of 3 files");
    rm_rf(root);
    free(root);

    /* a header rank and a name rank side by side; a string rank (not an
     * integer) leaves the name's */
    root = make_root();
    put_ranked(root, "a.trace.json", 1, 2, 100);
    put_file(root, "b_rank-0.trace.json",
             "{\"distributedInfo\": {\"rank\": \"1\"}, \"traceEvents\": []}", 50);
    expect_one(root, "b_rank-0.trace.json", 0, "file name", -1,
               "rank 0 of 2 files, from the file name");
    rm_rf(root);
    free(root);

    /* a negative rank declares nothing */
    root = make_root();
    put_ranked(root, "a_rank-1.trace.json", -1, 2, 100);
    put_ranked(root, "b.trace.json", 2, 4, 50);
    expect_one(root, "a_rank-1.trace.json", 1, "file name", 2, NULL);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_rank_tensorboard_gzip)
{
    /* tensorboard_trace_handler's names, gzip: the header's rank decides */
    char *root = make_root();
    char *r1 = ranked_doc(1, 2), *r0 = ranked_doc(0, 2);
    put_gz(root, "host_1234.1700000000001.pt.trace.json.gz", r1, 200);
    put_gz(root, "host_1235.1700000000000.pt.trace.json.gz", r0, 100);
    expect_one(root, "host_1235.1700000000000.pt.trace.json.gz", 0, "distributedInfo", 2,
               "rank 0 of 2 files, from distributedInfo");
    rm_rf(root);
    free(root);

    /* the same without distributedInfo: no way to tell */
    root = make_root();
    put_gz(root, "host_1234.1700000000001.pt.trace.json.gz", TRACE_DOC, 200);
    put_gz(root, "host_1235.1700000000000.pt.trace.json.gz", TRACE_DOC, 100);
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "host_1234.1700000000001.pt.trace.json.gz, "
                                          "host_1235.1700000000000.pt.trace.json.gz"));
    rm_rf(root);
    free(root);
    free(r0);
    free(r1);
}
END_TEST

START_TEST(test_rank_ambiguous)
{
    char *root = make_root();
    put_trace(root, "c.trace.json", 100);
    put_trace(root, "a.trace.json", 300);
    put_trace(root, "b.pt.trace.json", 200);
    put_trace(root, "merged-x.trace.json", 900); /* dropped first */
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_ptr_null(s.files);
    char *want = cat3(root,
                      ": 3 trace files and no way to tell which is rank 0 (no "
                      "distributedInfo.rank, no rank in the file names): ",
                      "a.trace.json, b.pt.trace.json, c.trace.json");
    ck_assert_str_eq(err.msg, want);
    free(want);
    rm_rf(root);
    free(root);

    /* distributedInfo after traceEvents is not looked for: still no rank */
    root = make_root();
    put_file(root, "a.trace.json", "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": 0}}",
             100);
    put_file(root, "b.trace.json", "{\"traceEvents\": [], \"distributedInfo\": {\"rank\": 1}}",
             200);
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "no way to tell which is rank 0"));
    rm_rf(root);
    free(root);

    /* many files: the list is capped, one line */
    root = make_root();
    for (int i = 0; i < 12; i++) {
        char name[32];
        snprintf(name, sizeof name, "t%02d.trace.json", i);
        put_trace(root, name, 100 + i);
    }
    ck_assert_int_eq(kd_discover_traces(root, &s, &err), KD_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, ": 12 trace files and no way"));
    ck_assert_ptr_nonnull(strstr(err.msg, "t00.trace.json, t01.trace.json"));
    ck_assert_ptr_nonnull(strstr(err.msg, "t07.trace.json, and 4 more"));
    ck_assert_ptr_null(strstr(err.msg, "t08"));
    ck_assert_ptr_null(strchr(err.msg, '\n'));
    rm_rf(root);
    free(root);

    /* one file per stage needs no rank */
    root = make_root();
    put_trace(root, "x-prefill.trace.json", 100);
    put_trace(root, "x-decode.trace.json", 200);
    put_trace(root, "x.trace.json", 50);
    expect_set(root, "x-prefill.trace.json,x-decode.trace.json,x.trace.json", NULL);
    rm_rf(root);
    free(root);
}
END_TEST

START_TEST(test_rank_one_file_not_read)
{
    /* a lone file: its name's rank, its header unread (it says 5) */
    char *root = make_root();
    put_ranked(root, "x_rank-2.trace.json", 5, 8, 100);
    expect_one(root, "x_rank-2.trace.json", 2, "file name", -1,
               "rank 2 of 1 file, from the file name");
    /* a file path: not read either */
    char *p = cat3(root, "/", "x_rank-2.trace.json");
    kd_trace_set s;
    kd_error err = {KD_OK, ""};
    ck_assert_int_eq(kd_discover_traces(p, &s, &err), KD_OK);
    ck_assert_int_eq(s.files[0].rank, 2);
    ck_assert_str_eq(s.files[0].rank_from, "file name");
    ck_assert_int_eq(s.files[0].world_size, -1);
    kd_trace_set_free(&s);
    free(p);
    rm_rf(root);
    free(root);

    root = make_root();
    put_ranked(root, "plain.trace.json", 5, 8, 100);
    expect_one(root, "plain.trace.json", -1, NULL, -1, "directory: 1 trace file");
    rm_rf(root);
    free(root);

    /* standard input: nothing known */
    kd_trace_set s2;
    ck_assert_int_eq(kd_discover_traces("-", &s2, &err), KD_OK);
    ck_assert_int_eq(s2.files[0].rank, -1);
    ck_assert_ptr_null(s2.files[0].rank_from);
    ck_assert_int_eq(s2.files[0].world_size, -1);
    kd_trace_set_free(&s2);
}
END_TEST

START_TEST(test_rank_same_rank_runs)
{
    /* rank 0 captured twice (two runs): the newest, and how says so */
    char *root = make_root();
    put_ranked(root, "run1.trace.json", 0, 2, 100);
    put_ranked(root, "run2.trace.json", 0, 2, 300);
    put_ranked(root, "run2_r1.trace.json", 1, 2, 400);
    expect_one(root, "run2.trace.json", 0, "distributedInfo", 2,
               "rank 0 of 3 files, from distributedInfo, newest per stage of 2 (one rank, "
               "several runs)");
    rm_rf(root);
    free(root);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* conformance: every case's mapping and formal inputs (skips without data) */

static char *read_all_gz(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    for (;;) {
        if (cap - n < 1 << 15) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
        int k = gzread(f, buf + n, (unsigned)(cap - n - 1));
        ck_assert_int_ge(k, 0);
        if (k == 0)
            break;
        n += (size_t)k;
    }
    gzclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

static yajl_val parse_file(const char *path)
{
    size_t n;
    char *text = read_all_gz(path, &n);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    char ebuf[256];
    yajl_val v = yajl_tree_parse(text, ebuf, sizeof ebuf);
    ck_assert_msg(v != NULL, "%s: %s", path, ebuf);
    free(text);
    return v;
}

static char *shared_dir(void)
{
    const char *env = getenv("KD_SHARED");
    char *d = NULL;
    if (env && *env) {
        d = xstrdup(env);
    } else {
        const char *src = getenv("KD_SRCDIR");
        if (src && *src)
            d = cat3(src, "/", "../shared");
    }
    if (!d)
        return NULL;
    size_t n = strlen(d);
    while (n > 1 && d[n - 1] == '/')
        d[--n] = '\0';
    char *probe = cat3(d, "/", "conformance/cases.json");
    bool ok = access(probe, R_OK) == 0;
    free(probe);
    if (!ok) {
        free(d);
        return NULL;
    }
    return d;
}

/* Resolves every input of list (relative to shared), compares with want. */
static void check_role(const char *shared, const char *name, const char *role, yajl_val inputs,
                       yajl_val want)
{
    ck_assert_msg(YAJL_IS_ARRAY(inputs) && YAJL_IS_ARRAY(want), "%s: bad %s", name, role);
    size_t got_n = 0;
    char *got[64];
    for (size_t i = 0; i < inputs->u.array.len; i++) {
        const char *rel = YAJL_GET_STRING(inputs->u.array.values[i]);
        ck_assert_ptr_nonnull(rel);
        char *p = cat3(shared, "/", rel);
        kd_trace_set s;
        kd_error err = {KD_OK, ""};
        kd_status st = kd_discover_traces(p, &s, &err);
        ck_assert_msg(st == KD_OK, "%s %s: %s", name, role, err.msg);
        for (size_t j = 0; j < s.n; j++) {
            const char *fp = s.files[j].path;
            size_t sl = strlen(shared);
            ck_assert_msg(strncmp(fp, shared, sl) == 0 && fp[sl] == '/', "%s: %s outside %s",
                          name, fp, shared);
            ck_assert_uint_lt(got_n, 64);
            got[got_n++] = xstrdup(fp + sl + 1);
        }
        kd_trace_set_free(&s);
        free(p);
    }
    ck_assert_msg(got_n == want->u.array.len, "%s %s: %zu traces, expected %zu", name, role,
                  got_n, want->u.array.len);
    for (size_t j = 0; j < got_n; j++) {
        const char *w = YAJL_GET_STRING(want->u.array.values[j]);
        ck_assert_ptr_nonnull(w);
        ck_assert_msg(strcmp(got[j], w) == 0, "%s %s[%zu]: %s, expected %s", name, role, j,
                      got[j], w);
        free(got[j]);
    }
}

START_TEST(test_conformance_cases)
{
    char *shared = shared_dir();
    if (!shared) {
        printf("test_conformance_cases: skipped (no conformance data: set KD_SHARED or "
               "KD_SRCDIR)\n");
        return;
    }
    char *cases_path = cat3(shared, "/", "conformance/cases.json");
    yajl_val cases = parse_file(cases_path);
    ck_assert(YAJL_IS_ARRAY(cases));
    size_t checked = 0;
    for (size_t i = 0; i < cases->u.array.len; i++) {
        yajl_val c = cases->u.array.values[i];
        const char *kname[] = {"name", NULL}, *kmap[] = {"mapping", NULL},
                   *kform[] = {"formal", NULL};
        const char *kwm[] = {"mapping_traces", NULL}, *kwf[] = {"formal_traces", NULL};
        const char *name = YAJL_GET_STRING(yajl_tree_get(c, kname, yajl_t_string));
        ck_assert_ptr_nonnull(name);
        char *ename = cat3("conformance/expected/", name, ".json.gz");
        char *epath = cat3(shared, "/", ename);
        yajl_val exp = parse_file(epath);
        check_role(shared, name, "mapping", yajl_tree_get(c, kmap, yajl_t_array),
                   yajl_tree_get(exp, kwm, yajl_t_array));
        check_role(shared, name, "formal", yajl_tree_get(c, kform, yajl_t_array),
                   yajl_tree_get(exp, kwf, yajl_t_array));
        yajl_tree_free(exp);
        free(epath);
        free(ename);
        checked++;
    }
    ck_assert_uint_gt(checked, 0);
    yajl_tree_free(cases);
    free(cases_path);
    free(shared);
}
END_TEST

Suite *discover_suite(void)
{
    Suite *s = suite_create("discover");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_trace_file_name);
    tcase_add_test(tc, test_parse_tp_rank);
    tcase_add_test(tc, test_parse_stage);
    tcase_add_test(tc, test_file_input);
    tcase_add_test(tc, test_missing_path);
    tcase_add_test(tc, test_empty_dir);
    tcase_add_test(tc, test_unreadable);
    tcase_add_test(tc, test_direct_traces);
    tcase_add_test(tc, test_newest_trace_dir);
    tcase_add_test(tc, test_stage_subdirs);
    tcase_add_test(tc, test_merged);
    tcase_add_test(tc, test_rank_filter);
    tcase_add_test(tc, test_newest_per_stage_and_order);
    tcase_add_test(tc, test_non_trace_json);
    tcase_add_test(tc, test_probed_json);
    tcase_add_test(tc, test_symlinks);
    suite_add_tcase(s, tc);
    TCase *tcr = tcase_create("ranks");
    tcase_add_test(tcr, test_parse_rank_name);
    tcase_add_test(tcr, test_rank_names_in_dir);
    tcase_add_test(tcr, test_rank_from_distributed_info);
    tcase_add_test(tcr, test_rank_tensorboard_gzip);
    tcase_add_test(tcr, test_rank_ambiguous);
    tcase_add_test(tcr, test_rank_one_file_not_read);
    tcase_add_test(tcr, test_rank_same_rank_runs);
    suite_add_tcase(s, tcr);
    TCase *tcc = tcase_create("conformance");
    tcase_set_timeout(tcc, 60);
    tcase_add_test(tcc, test_conformance_cases);
    suite_add_tcase(s, tcc);
    return s;
}
