/* test_classify.c — classification as a value (classify.h): the reference
 * profile gives the reference's categories; a profile of a test's own,
 * handed to a load through kd_load_options.rules, changes what the loader
 * keeps as a kernel, which annotations select a stage, and the category the
 * extraction gives, so no step classifies with tables of its own. */
#include "config.h"

#include <regex.h>
#include <string.h>

#include "kerndiff/classify.h"
#include "kerndiff/extract.h"
#include "kerndiff/load.h"
#include "suites.h"

START_TEST(test_reference_profile)
{
    const kd_rules *r = kd_rules_reference();
    ck_assert_str_eq(r->name, "reference");
    ck_assert_int_eq(kd_rules_classify(r, "ncclDevKernel_AllReduce_Sum_bf16"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "Memcpy DtoD (Device -> Device)"), KD_CAT_MEMORY);
    ck_assert_int_eq(kd_rules_classify(r, "void cutlass::Kernel<gemm>"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "triton_poi_fused_add_0"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "rmsnorm_kernel"), KD_CAT_ELEMENTWISE);
    /* the weak tiers: not when the name also looks like compute */
    ck_assert_int_eq(kd_rules_classify(r, "fill_kernel"), KD_CAT_MEMORY);
    ck_assert_int_eq(kd_rules_classify(r, "moe_dispatch"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(r, "fused_moe_kernel_dispatch"), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(r, "mystery"), KD_CAT_OTHER);
    /* the kernel-site helpers' categories */
    ck_assert_str_eq(kd_rules_classify_site(r, "flash_attn_fwd"), "attention");
    ck_assert_str_eq(kd_rules_classify_site(r, "copy_kernel"), "memory");
    ck_assert_str_eq(kd_rules_classify_site(r, "gemm_copy"), "gemm");
    ck_assert_str_eq(kd_rules_classify_site(r, "mystery"), "other");
    ck_assert(kd_rules_kernel_name_hint(r, "void foo"));
    ck_assert(kd_rules_kernel_name_hint(r, "sm90_xmma_gemm"));
    ck_assert(!kd_rules_kernel_name_hint(r, "mystery"));
    ck_assert_int_eq(kd_rules_annotation_stage(r, "generation_1 step"), KD_STAGE_DECODE);
    ck_assert_int_eq(kd_rules_annotation_stage(r, "prefill_batch"), KD_STAGE_EXTEND);
    ck_assert_int_eq(kd_rules_annotation_stage(r, "forward"), -1);
    ck_assert(kd_rules_is_launch(r, "cudalaunchkernel", true));
    ck_assert(!kd_rules_is_launch(r, "culaunchkernel", true));
    ck_assert(kd_rules_is_launch(r, "culaunchkernel", false));
}
END_TEST

/* A profile of the test's own: "fabric" kernels are communication, nothing
 * is compute, "zz" names are kernel-like, "tok_phase" selects decode. */
static const char *const fabric[] = {"fabric", NULL};
static const char *const zz[] = {"zz", NULL};
static const char *const none[] = {NULL};
static const char *const tok_phase[] = {"tok_phase", NULL};
static const kd_class_step steps[] = {{KD_CAT_COMMUNICATION, "communication", fabric, false, NULL}};
static const char *const *const hints[] = {zz};

static kd_rules custom_rules(void)
{
    kd_rules r = *kd_rules_reference();
    r.name = "test";
    r.steps = steps;
    r.n_steps = 1;
    r.compute_like = none;
    r.hint_prefixes = none;
    r.hint_lists = hints;
    r.n_hint_lists = 1;
    r.decode_keywords = tok_phase;
    return r;
}

START_TEST(test_categories_of_a_profile)
{
    const kd_rules *r = kd_rules_reference();
    ck_assert_ptr_eq(kd_rules_builtin("reference"), r);
    ck_assert_ptr_eq(kd_rules_builtin("default"), kd_rules_default());
    ck_assert_ptr_null(kd_rules_builtin("nosuch"));
    ck_assert_str_eq(kd_rules_default()->name, "default");
    ck_assert_str_eq(kd_rules_default()->source, "built-in");
    ck_assert_uint_eq(r->n_categories, KD_CAT_COUNT);
    for (kd_category c = 0; c < KD_CAT_COUNT; c++) {
        ck_assert_str_eq(kd_rules_category_name(r, c), kd_category_name(c));
        ck_assert_int_eq(kd_rules_kind(r, c), c);
        ck_assert_int_eq(kd_rules_category_index(r, kd_category_name(c)), c);
    }
    ck_assert_int_eq(kd_rules_category_index(r, "attention"), -1);
    ck_assert_str_eq(kd_rules_category_name(r, 12), "other"); /* out of range */
    ck_assert_int_eq(kd_rules_kind(r, 12), KD_CAT_OTHER);
}
END_TEST

/* A category a profile adds behaves as its kind; a regex step matches the
 * lowered name. */
START_TEST(test_added_category_and_regex)
{
    static const kd_category_def cats[] = {
        {"compute", KD_CAT_COMPUTE},       {"communication", KD_CAT_COMMUNICATION},
        {"memory", KD_CAT_MEMORY},         {"elementwise", KD_CAT_ELEMENTWISE},
        {"other", KD_CAT_OTHER},           {"attention", KD_CAT_COMPUTE},
    };
    static const char *const attn[] = {"sage_fwd", NULL};
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^my_ar_[0-9]+$", REG_EXTENDED | REG_NOSUB), 0);
    kd_class_step st[] = {{5, "attention", attn, false, NULL},
                          {KD_CAT_COMMUNICATION, "communication", NULL, false, &re}};
    kd_rules r = *kd_rules_reference();
    r.categories = cats;
    r.n_categories = 6;
    r.steps = st;
    r.n_steps = 2;
    ck_assert_int_eq(kd_rules_classify(&r, "sage_fwd"), 5);
    ck_assert_str_eq(kd_rules_category_name(&r, 5), "attention");
    ck_assert_int_eq(kd_rules_kind(&r, 5), KD_CAT_COMPUTE);
    ck_assert_int_eq(kd_rules_classify(&r, "MY_AR_42"), KD_CAT_COMMUNICATION); /* lowered */
    ck_assert_int_eq(kd_rules_classify(&r, "my_ar_x"), KD_CAT_OTHER);
    regfree(&re);
}
END_TEST

START_TEST(test_custom_profile)
{
    kd_rules r = custom_rules();
    ck_assert_int_eq(kd_rules_classify(&r, "zz_fabric_xfer"), KD_CAT_COMMUNICATION);
    ck_assert_int_eq(kd_rules_classify(&r, "void cutlass::Kernel<gemm>"), KD_CAT_OTHER);
    ck_assert_int_eq(kd_rules_classify(&r, "ncclKernel"), KD_CAT_OTHER);
    ck_assert(kd_rules_kernel_name_hint(&r, "zz_thing"));
    ck_assert(!kd_rules_kernel_name_hint(&r, "void foo"));
    ck_assert_int_eq(kd_rules_annotation_stage(&r, "tok_phase 3"), KD_STAGE_DECODE);
}
END_TEST

/* The loader and the extraction read the rules the load was given: a
 * kernel without a kernel category is kept on its name hint, its category
 * comes from the profile, and the profile's stage keyword makes an
 * annotation. */
static const char trace_json[] =
    "{\"traceEvents\":["
    "{\"ph\":\"X\",\"cat\":\"device_op\",\"name\":\"zz_fabric_xfer\",\"pid\":3,\"tid\":7,"
    "\"ts\":100,\"dur\":10,\"args\":{\"stream\":7}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"ncclKernel_AllReduce\",\"pid\":3,\"tid\":8,"
    "\"ts\":100,\"dur\":10,\"args\":{\"stream\":8}},"
    "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"tok_phase 1\",\"pid\":1,\"tid\":1,"
    "\"ts\":90,\"dur\":50}]}";

static kd_kernel_list extract_with(const kd_rules *rules, kd_trace **t, size_t *annotations)
{
    kd_load_options opt = {.threads = 1, .rules = rules};
    kd_error err;
    kd_error_clear(&err);
    *t = kd_load_trace_mem_opts(trace_json, sizeof trace_json - 1, "rules.json", &opt, &err);
    ck_assert_msg(*t != NULL, "%s", err.msg);
    ck_assert_ptr_eq(kd_trace_rules(*t), rules ? rules : kd_rules_reference());
    *annotations = (*t)->annotations.n;
    kd_kernel_list l;
    ck_assert_int_eq(kd_extract_kernel_events(*t, NULL, &l, &err), KD_OK);
    return l;
}

START_TEST(test_rules_reach_the_load)
{
    kd_rules r = custom_rules();
    kd_trace *t;
    size_t ann;
    /* the reference: device_op is no kernel category and "zz" no hint, and
     * "tok_phase" selects no stage */
    kd_kernel_list l = extract_with(NULL, &t, &ann);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_int_eq(l.v[0].category, KD_CAT_COMMUNICATION); /* nccl */
    ck_assert_uint_eq(ann, 0);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
    /* the test's profile: the "zz" kernel is kept and is communication; the
     * nccl kernel (a kernel by its category) is other; the annotation counts */
    l = extract_with(&r, &t, &ann);
    ck_assert_uint_eq(l.n, 2);
    for (size_t i = 0; i < l.n; i++) {
        const char *name = kd_str(t->strings, l.v[i].name);
        kd_category want = strstr(name, "fabric") ? KD_CAT_COMMUNICATION : KD_CAT_OTHER;
        ck_assert_msg(l.v[i].category == want, "%s: %s", name, kd_category_name(l.v[i].category));
    }
    ck_assert_uint_eq(ann, 1);
    kd_kernel_list_free(&l);
    kd_trace_free(t);
}
END_TEST

Suite *classify_suite(void)
{
    Suite *s = suite_create("classify");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_reference_profile);
    tcase_add_test(tc, test_custom_profile);
    tcase_add_test(tc, test_categories_of_a_profile);
    tcase_add_test(tc, test_added_category_and_regex);
    tcase_add_test(tc, test_rules_reach_the_load);
    suite_add_tcase(s, tc);
    return s;
}
