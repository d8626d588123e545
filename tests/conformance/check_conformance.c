/* check_conformance.c — kerndiff's per-trace analysis against the
 * reference's outputs, case by case (../shared/conformance/cases.json).
 * Skips (exit 77) with a message when ../shared is absent. */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsoncmp.h"
#include "kerndiff/triage.h"
#include "kerndiff/triage_report.h"

static char shared_dir[4096];
static yajl_val cases;

static const char *case_str(yajl_val c, const char *key)
{
    yajl_val v = kd_json_member(c, key);
    if (v && v->type == yajl_t_array && v->u.array.len)
        v = v->u.array.values[0];
    return v && v->type == yajl_t_string ? v->u.string : NULL;
}

/* Our paths start with the shared dir; the expected ones are relative to it. */
static const char *relative(const char *p)
{
    size_t n = strlen(shared_dir);
    if (strncmp(p, shared_dir, n) == 0 && p[n] == '/')
        return p + n + 1;
    return p;
}

static void strip_paths(yajl_val list)
{
    if (!list || list->type != yajl_t_array)
        return;
    for (size_t i = 0; i < list->u.array.len; i++) {
        yajl_val s = list->u.array.values[i];
        if (s->type == yajl_t_string)
            memmove(s->u.string, relative(s->u.string), strlen(relative(s->u.string)) + 1);
    }
}

static void strip_stage_paths(yajl_val stages)
{
    if (!stages || stages->type != yajl_t_object)
        return;
    for (size_t i = 0; i < stages->u.object.len; i++) {
        yajl_val st = stages->u.object.values[i];
        const char *keys[] = {"formal_trace", "mapping_trace"};
        for (int k = 0; k < 2; k++) {
            yajl_val s = kd_json_member(st, keys[k]);
            if (s && s->type == yajl_t_string)
                memmove(s->u.string, relative(s->u.string), strlen(relative(s->u.string)) + 1);
        }
    }
}

static yajl_val run_case(yajl_val c, bool split, char **markdown, char *msg, size_t msgsz)
{
    char formal[8192], mapping[8192];
    snprintf(formal, sizeof formal, "%s/%s", shared_dir, case_str(c, "formal"));
    snprintf(mapping, sizeof mapping, "%s/%s", shared_dir, case_str(c, "mapping"));
    kd_triage_options opt;
    memset(&opt, 0, sizeof opt);
    opt.formal_path = formal;
    opt.mapping_path = mapping;
    opt.pid_substring = case_str(c, "pid_substring");
    opt.dump_internals = true;
    /* the expected outputs were produced with framework sglang (kernel-sites §8) */
    opt.framework_set = true;
    opt.framework = KD_FW_SGLANG;
    yajl_val km = kd_json_member(c, "kernel_map");
    opt.no_kernel_map = km && km->type == yajl_t_false;
    opt.min_share = 1.0;
    yajl_val lim = kd_json_member(c, "overlap_table_limit");
    opt.limit = lim && lim->type == yajl_t_number ? (size_t)YAJL_GET_INTEGER(lim) : 0;
    /* the reference's own tables (kerndiff --rules reference): the default
     * profile classifies current stacks differently (docs/taxonomy.md) */
    opt.load.rules = kd_rules_reference();
    if (split) { /* every plain trace parsed as two halves at once (load.h) */
        opt.load.threads = 2;
        opt.load.split_min_bytes = 1;
    }
    kd_error err;
    kd_error_clear(&err);
    kd_triage t;
    if (kd_triage_run(&opt, &t, &err) != KD_OK) {
        snprintf(msg, msgsz, "triage failed: %.900s", err.msg);
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    bool ok = mem && kd_triage_write_json(&t, &opt, mem);
    if (mem)
        fclose(mem);
    size_t mlen = 0;
    FILE *md = open_memstream(markdown, &mlen);
    ok = ok && md && kd_triage_write_markdown(&t, &opt, md);
    if (md)
        fclose(md);
    kd_triage_free(&t);
    yajl_val doc = ok ? kd_json_parse_buf(buf, msg, msgsz) : NULL;
    if (!ok)
        snprintf(msg, msgsz, "writing the JSON failed");
    free(buf);
    return doc;
}

static void check_equal(const char *name, const char *what, yajl_val e, yajl_val a, bool partial)
{
    kd_jsoncmp cmp;
    memset(&cmp, 0, sizeof cmp);
    cmp.actual_keys_only = partial;
    if (!kd_json_equal(&cmp, e, a))
        ck_abort_msg("%s: %s differs at %s: %s", name, what, cmp.where, cmp.what);
}

/* The stage objects: every stage key, null-ness, pids, and the events. */
static void check_stages(const char *name, yajl_val exp_stages, yajl_val act_stages)
{
    ck_assert_msg(exp_stages && act_stages, "%s: stages missing", name);
    ck_assert_msg(exp_stages->u.object.len == act_stages->u.object.len,
                  "%s: %zu stages expected, got %zu", name, exp_stages->u.object.len,
                  act_stages->u.object.len);
    for (size_t i = 0; i < exp_stages->u.object.len; i++) {
        const char *stage = exp_stages->u.object.keys[i];
        yajl_val e = exp_stages->u.object.values[i];
        yajl_val a = kd_json_member(act_stages, stage);
        ck_assert_msg(a != NULL, "%s: stage %s missing", name, stage);
        ck_assert_msg((e->type == yajl_t_null) == (a->type == yajl_t_null),
                      "%s: stage %s null-ness differs", name, stage);
        if (e->type == yajl_t_null)
            continue;
        const char *fields[] = {"formal_pid", "mapping_pid", "formal_trace", "mapping_trace",
                                "events", "overlap_stats", "aggregates",
                                "top_overlap_opportunities", "top_hidden_low_roi",
                                "source_map_mapping_only", "source_map", "action_rows",
                                "rendered_rows"};
        size_t nfields = sizeof fields / sizeof *fields;
        for (size_t f = 0; f < nfields; f++) {
            char what[256];
            snprintf(what, sizeof what, "stages.%s.%s", stage, fields[f]);
            yajl_val av = kd_json_member(a, fields[f]);
            ck_assert_msg(av != NULL, "%s: %s missing from the output", name, what);
            check_equal(name, what, kd_json_member(e, fields[f]), av, false);
        }
    }
}

static const char *member_str(yajl_val o, const char *k)
{
    yajl_val v = kd_json_member(o, k);
    return v && v->type == yajl_t_string ? v->u.string : "";
}

static double member_num(yajl_val o, const char *k)
{
    yajl_val v = kd_json_member(o, k);
    return v && v->type == yajl_t_number ? YAJL_GET_DOUBLE(v) : 0.0;
}

/* The reference's table text from its own rendered_rows, through the same
 * renderer: our Markdown must be that text. Where a golden exists (the
 * synthetic cases, fixtures/conformance/NAME.md, written independently by
 * tests/conformance/make_markdown_goldens.py), it must be that too. */
static void check_markdown(const char *name, yajl_val exp_stages, const char *ours)
{
    kd_table_row rows[256];
    size_t n = 0;
    for (size_t i = 0; i < exp_stages->u.object.len; i++) {
        yajl_val st = exp_stages->u.object.values[i];
        kd_stage stage;
        if (st->type == yajl_t_null || !kd_stage_from_name(exp_stages->u.object.keys[i], &stage))
            continue;
        yajl_val rr = kd_json_member(st, "rendered_rows");
        for (size_t k = 0; rr && k < rr->u.array.len && n < 256; k++) {
            yajl_val r = rr->u.array.values[k];
            rows[n++] = (kd_table_row){stage, member_str(r, "priority"), member_str(r, "verdict"),
                                       member_str(r, "kernel"), member_str(r, "python_scope"),
                                       member_str(r, "dependency_signal"),
                                       member_str(r, "recommendation"), member_num(r, "total_us"),
                                       member_num(r, "share_pct"), member_num(r, "exclusive_ratio"),
                                       member_num(r, "hidden_ratio")};
        }
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    ck_assert(mem != NULL);
    ck_assert(kd_render_overlap_table(mem, rows, n));
    fclose(mem);
    ck_assert_msg(strcmp(text, ours) == 0, "%s: Markdown differs from the reference's rows:\n%s\n--- ours:\n%s",
                  name, text, ours);
    free(text);
    char golden[8192];
    const char *src = getenv("KD_SRCDIR");
    snprintf(golden, sizeof golden, "%s/fixtures/conformance/%s.md", src && *src ? src : ".", name);
    FILE *g = fopen(golden, "r");
    if (!g)
        return;
    char buf[65536];
    size_t got = fread(buf, 1, sizeof buf - 1, g);
    fclose(g);
    buf[got] = '\0';
    ck_assert_msg(strcmp(buf, ours) == 0, "%s: Markdown differs from %s", name, golden);
}

/* Case i against the reference's output, loaded serially or split. */
static void check_case(int i, bool split)
{
    yajl_val c = cases->u.array.values[i];
    const char *name = case_str(c, "name");
    char path[8192], msg[1024] = "";
    snprintf(path, sizeof path, "%s/conformance/expected/%s.json.gz", shared_dir, name);
    yajl_val exp = kd_json_read_file(path, msg, sizeof msg);
    ck_assert_msg(exp != NULL, "%s: %s", name, msg);
    char *markdown = NULL;
    yajl_val act = run_case(c, split, &markdown, msg, sizeof msg);
    ck_assert_msg(act != NULL, "%s: %s", name, msg);
    strip_paths(kd_json_member(act, "formal_traces"));
    strip_paths(kd_json_member(act, "mapping_traces"));
    strip_stage_paths(kd_json_member(act, "stages"));
    check_equal(name, "formal_traces", kd_json_member(exp, "formal_traces"),
                kd_json_member(act, "formal_traces"), false);
    check_equal(name, "mapping_traces", kd_json_member(exp, "mapping_traces"),
                kd_json_member(act, "mapping_traces"), false);
    check_stages(name, kd_json_member(exp, "stages"), kd_json_member(act, "stages"));
    check_markdown(name, kd_json_member(exp, "stages"), markdown);
    check_equal(name, "mapping_kernel_map", kd_json_member(exp, "mapping_kernel_map"),
                kd_json_member(act, "mapping_kernel_map"), false);
    check_equal(name, "formal_stage_payloads", kd_json_member(exp, "formal_stage_payloads"),
                kd_json_member(act, "formal_stage_payloads"), false);
    free(markdown);
    yajl_tree_free(exp);
    yajl_tree_free(act);
}

START_TEST(test_case) { check_case(_i, false); }
END_TEST

START_TEST(test_case_split) { check_case(_i, true); }
END_TEST

static bool find_shared(void)
{
    const char *env = getenv("KD_SHARED");
    const char *src = getenv("KD_SRCDIR");
    char cand[4096];
    if (env && *env)
        snprintf(cand, sizeof cand, "%s", env);
    else
        snprintf(cand, sizeof cand, "%s/../shared", src && *src ? src : ".");
    char probe[8192];
    snprintf(probe, sizeof probe, "%s/conformance/cases.json", cand);
    snprintf(shared_dir, sizeof shared_dir, "%s", cand);
    if (access(probe, R_OK) != 0)
        return false;
    return true;
}

int main(void)
{
    if (!find_shared()) {
        printf("SKIP: conformance: %s/conformance not found (set KD_SHARED to run it)\n", shared_dir);
        return 77;
    }
    char path[8192], msg[1024];
    snprintf(path, sizeof path, "%s/conformance/cases.json", shared_dir);
    cases = kd_json_read_file(path, msg, sizeof msg);
    if (!cases || cases->type != yajl_t_array) {
        fprintf(stderr, "conformance: cannot read %s: %s\n", path, msg);
        return 1;
    }
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("cases");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_case, 0, (int)cases->u.array.len);
    tcase_add_loop_test(tc, test_case_split, 0, (int)cases->u.array.len);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_VERBOSE);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    yajl_tree_free(cases);
    return failed ? 1 : 0;
}
