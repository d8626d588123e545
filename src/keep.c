/* keep.c — which events a trace keeps (load_internal.h): at each event's
 * closing brace the decoded fields are tested against the reference's
 * predicates (reference §1, §4; kernel-sites.md §3) and the rules of the
 * load (classify.h), and the kernels, cpu_ops, Python frames, launches,
 * stage annotations, step markers and thread names the pipeline reads are
 * appended to the trace; malformed events are counted by reason. */
#include "config.h"

#include "load_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kerndiff/text.h"

/* Per distinct string: cached predicate results (a name or a cat repeats
 * across millions of events; its tests are computed once). */
#define SF_NAME_DONE 0x0001u
#define SF_META 0x0002u       /* is_trace_metadata_name */
#define SF_NAME_ANNOT 0x0004u /* lowered normalized name starts "## call " */
#define SF_PYSCOPE 0x0008u    /* looks_like_python_scope_name */
#define SF_HINT 0x0010u       /* kernel name hint */
#define SF_OH_LAUNCH_RT 0x0020u /* name in the cuda_runtime launch set */
#define SF_OH_LAUNCH_ANY 0x0040u /* name in the any-cat launch set */
#define SF_HAS_LAUNCH 0x0080u /* "launch" in lc(nt(name)) */
#define SF_CAT_DONE 0x0100u
#define SF_NONKERNEL 0x0200u  /* is_non_kernel_trace_category */
#define SF_CAT_ANNOT 0x0400u  /* "annotation" in lowered normalized cat */
#define SF_KERNEL_CAT 0x0800u /* "kernel" in cat or starts "gpu_" */
#define SF_KH_LAUNCH_CAT 0x1000u /* cuda_runtime / cuda_driver */
#define SF_RUNTIME_CAT 0x2000u /* lowered cat == cuda_runtime */
#define SF_STAGE_CAT 0x4000u  /* user_annotation / gpu_user_annotation */
#define SF_GPU_ANNOT 0x8000u  /* gpu_user_annotation */
#define SF_CPU_OP_CAT 0x10000u /* cat is exactly "cpu_op" */
#define SF_PYFUNC_CAT 0x20000u /* cat is exactly "python_function" */
#define SF_LEGACY_OP_CAT 0x40000u /* cat is exactly "Operator": a 2021 export's cpu_op */

struct kd_sid_info {
    uint32_t flags;
    int8_t stage; /* for annotation names: 0 extend, 1 decode, -1 none, -2 unknown */
    uint32_t seen_cat; /* index+1 in trace->seen_cats */
    uint32_t seen_pid; /* index+1 in trace->seen_pids */
};
typedef struct kd_sid_info sid_info;


static kd_jval as_jval(const kd_keeper *L, field_id id)
{
    const field_val *f = &L->f[id];
    kd_jval v = {f->type, f->boolean, f->container_empty, NULL, 0};
    if (f->type == KD_J_INT || f->type == KD_J_FLOAT || f->type == KD_J_STRING) {
        v.text = L->text + f->off;
        v.len = f->len;
    }
    return v;
}


/* ---- per-string predicate cache ------------------------------------- */

static sid_info *info_of(kd_keeper *L, kd_sid id)
{
    if (id >= L->info_cap) {
        size_t cap = L->info_cap ? L->info_cap : 64;
        while (cap <= id)
            cap *= 2;
        sid_info *p = realloc(L->info, cap * sizeof *p);
        if (!p)
            return NULL;
        memset(p + L->info_cap, 0, (cap - L->info_cap) * sizeof *p);
        for (size_t i = L->info_cap; i < cap; i++)
            p[i].stage = -2;
        L->info = p;
        L->info_cap = cap;
    }
    return &L->info[id];
}

/* normalize_text(s).lower() into stack (3 * len + 2 bytes) or, for a long
 * string, a malloc'd buffer left in *heap; NULL on out-of-memory. */
static const char *lowered_of(const char *s, char *stack, size_t stack_size, char **heap)
{
    size_t len = strlen(s);
    char *buf = stack;
    *heap = NULL;
    if (3 * len + 2 > stack_size) {
        buf = *heap = malloc(3 * len + 2);
        if (!buf)
            return NULL;
    }
    return kd_normalized_lower_into(s, len, buf);
}

/* A name's tests, once per distinct name; what is a kernel-name hint, a
 * launch and a stage keyword is the rules' to say (classify.h). */
static bool fill_name_flags(const kd_rules *rules, sid_info *si, const char *name)
{
    char stack[1024], *heap;
    const char *low = lowered_of(name, stack, sizeof stack, &heap);
    if (!low)
        return false;
    uint32_t fl = SF_NAME_DONE;
    if (kd_is_trace_metadata_name(name))
        fl |= SF_META;
    if (kd_starts_with(low, "## call "))
        fl |= SF_NAME_ANNOT;
    if (kd_looks_like_python_scope_lowered(low))
        fl |= SF_PYSCOPE;
    if (kd_rules_kernel_name_hint(rules, low))
        fl |= SF_HINT;
    if (kd_rules_is_launch(rules, low, true))
        fl |= SF_OH_LAUNCH_RT;
    if (kd_rules_is_launch(rules, low, false))
        fl |= SF_OH_LAUNCH_ANY;
    if (strstr(low, "launch"))
        fl |= SF_HAS_LAUNCH;
    si->flags |= fl;
    si->stage = (int8_t)kd_rules_annotation_stage(rules, low);
    free(heap);
    return true;
}

static bool fill_cat_flags(sid_info *si, const char *cat)
{
    char stack[1024], *heap;
    const char *low = lowered_of(cat, stack, sizeof stack, &heap);
    if (!low)
        return false;
    uint32_t fl = SF_CAT_DONE;
    if (strcmp(cat, "cpu_op") == 0)
        fl |= SF_CPU_OP_CAT;
    if (strcmp(cat, "python_function") == 0)
        fl |= SF_PYFUNC_CAT;
    if (strcmp(cat, "Operator") == 0)
        fl |= SF_LEGACY_OP_CAT;
    if (kd_is_non_kernel_category_lowered(low))
        fl |= SF_NONKERNEL;
    if (strstr(low, "annotation"))
        fl |= SF_CAT_ANNOT;
    if (strstr(low, "kernel") || kd_starts_with(low, "gpu_"))
        fl |= SF_KERNEL_CAT;
    if (strcmp(low, "cuda_runtime") == 0 || strcmp(low, "cuda_driver") == 0)
        fl |= SF_KH_LAUNCH_CAT;
    if (strcmp(low, "cuda_runtime") == 0)
        fl |= SF_RUNTIME_CAT;
    if (strcmp(low, "user_annotation") == 0 || strcmp(low, "gpu_user_annotation") == 0)
        fl |= SF_STAGE_CAT;
    if (strcmp(low, "gpu_user_annotation") == 0)
        fl |= SF_GPU_ANNOT;
    si->flags |= fl;
    free(heap);
    return true;
}

/* ---- building records at the end of an event ------------------------- */

/* Interns Python str(v); absent/null give "None". Containers: returns 0 and
 * *bad set. Strings and ints are interned straight from their text. */
static kd_sid intern_pystr(kd_keeper *L, const kd_jval *v, bool *bad)
{
    if (v->type == KD_J_STRING || (v->type == KD_J_INT && !(v->len == 2 && v->text[0] == '-' && v->text[1] == '0')))
        return kd_intern(L->t->strings, v->text, v->len);
    if (v->type == KD_J_ARRAY || v->type == KD_J_OBJECT) {
        *bad = true;
        return 0;
    }
    size_t n = 0;
    char *s = kd_jval_pystr(v, &n);
    if (!s) {
        *L->status = KD_ENOMEM;
        return 0;
    }
    kd_sid id = kd_intern(L->t->strings, s, n);
    free(s);
    return id;
}

static kd_sid intern_cached(kd_keeper *L, int slot, const kd_jval *v, bool *bad)
{
    last_string *c = &L->last[slot];
    bool cacheable = (v->type == KD_J_STRING || v->type == KD_J_INT) && v->len <= sizeof c->text;
    if (cacheable && c->id && c->type == v->type && c->len == v->len &&
        memcmp(c->text, v->text, v->len) == 0)
        return c->id;
    kd_sid id = intern_pystr(L, v, bad);
    if (cacheable && id) {
        memcpy(c->text, v->text, v->len);
        c->len = v->len;
        c->type = v->type;
        c->id = id;
    }
    return id;
}

static void count_skip(kd_keeper *L, kd_skip_reason r) { L->t->skipped[r]++; }

static bool note_seen(kd_keeper *L, kd_sid cat, kd_sid pid)
{
    sid_info *ci = info_of(L, cat);
    if (!ci)
        return false;
    if (!ci->seen_cat) {
        if (!KD_VEC_PUSH(L->t->seen_cats, cat) || !KD_VEC_PUSH(L->t->seen_cat_counts, 0))
            return false;
        ci->seen_cat = (uint32_t)L->t->seen_cats.n;
    }
    L->t->seen_cat_counts.v[ci->seen_cat - 1]++;
    sid_info *pi = info_of(L, pid);
    if (!pi)
        return false;
    if (!pi->seen_pid) {
        if (!KD_VEC_PUSH(L->t->seen_pids, pid))
            return false;
        pi->seen_pid = (uint32_t)L->t->seen_pids.n;
    }
    return true;
}

/* ProfilerStep#N: N, or -1 */
static int64_t profiler_step_number(const char *name)
{
    if (strncmp(name, "ProfilerStep#", 13) != 0)
        return -1;
    const char *p = name + 13;
    if (*p < '0' || *p > '9')
        return -1;
    char *end;
    errno = 0;
    long long n = strtoll(p, &end, 10);
    if (errno || *end)
        return -1;
    return n;
}

typedef struct {
    kd_sid name, cat, pid, tid;
    double ts, dur;
    bool complete;
    int64_t ext, corr;
    bool stream_marker;
    const sid_info *ni, *ci;
} event_view;

static bool keep_kernel(kd_keeper *L, const event_view *e, uint32_t flags)
{
    kd_jval s = as_jval(L, F_A_STREAM);
    if (!kd_jval_truthy(&s))
        s = as_jval(L, F_A_CUDA_STREAM);
    kd_sid stream = 0;
    if (kd_jval_truthy(&s)) {
        bool bad = false;
        stream = intern_pystr(L, &s, &bad);
        if (bad) {
            count_skip(L, KD_SKIP_BAD_TYPE);
            return true;
        }
        if (!stream) {
            *L->status = KD_ENOMEM;
            return false;
        }
    }
    kd_kernel_rec k = {e->name, e->cat, e->pid, e->tid, stream, flags,
                       e->ts, e->dur, e->ext, e->corr};
    return KD_VEC_PUSH(L->t->kernels, k);
}

/* reference §4 is_kernel_event / kernel-sites §3 is_gpu_kernel_event, less
 * the test that the event is complete (dur > 0) */
static uint32_t kernel_flags(const event_view *e)
{
    const sid_info *ni = e->ni, *ci = e->ci;
    if ((ni->flags & SF_META) || (ci->flags & SF_NONKERNEL) || (ci->flags & SF_CAT_ANNOT) ||
        (ni->flags & SF_NAME_ANNOT))
        return 0;
    if (ci->flags & SF_KERNEL_CAT)
        return KD_KF_OH_KERNEL | KD_KF_KH_KERNEL;
    if (!(ni->flags & SF_PYSCOPE) && e->stream_marker)
        return KD_KF_KH_KERNEL | ((ni->flags & SF_HINT) ? KD_KF_OH_KERNEL : 0);
    return 0;
}

/* A kernel the reference never sees, kept for the accounting of its pid
 * (divergence D7): no duration, or skipped as malformed. Only records that
 * would pass is_kernel_event are kept. */
static bool keep_unseen_kernel(kd_keeper *L, const event_view *e, uint32_t flags)
{
    if (!(kernel_flags(e) & KD_KF_OH_KERNEL))
        return true;
    /* a skipped event's ts may be anything: it is not read */
    double ts = (flags & KD_KF_SKIPPED) ? 0.0 : e->ts;
    kd_kernel_rec k = {e->name, e->cat, e->pid, e->tid, 0, flags, ts, 0.0, e->ext, e->corr};
    return KD_VEC_PUSH(L->t->kernels, k);
}

static bool keep_skipped_kernel(kd_keeper *L, const event_view *e, kd_skip_reason r)
{
    return keep_unseen_kernel(L, e, KD_KF_SKIPPED | ((uint32_t)r << KD_KF_SKIP_SHIFT));
}

static bool keep_complete_event(kd_keeper *L, const event_view *e)
{
    const sid_info *ni = e->ni, *ci = e->ci;
    uint32_t kflags = e->complete ? kernel_flags(e) : 0;
    if (!e->complete && e->dur == 0.0 && !keep_unseen_kernel(L, e, KD_KF_ZERO_DUR))
        return false;
    if (!e->complete && e->dur < 0.0 && !keep_skipped_kernel(L, e, KD_SKIP_BAD_DUR))
        return false;
    if (kflags) {
        if (L->f[F_NAME].type == KD_J_ABSENT) {
            count_skip(L, KD_SKIP_MISSING_NAME); /* reference raises KeyError */
            return keep_skipped_kernel(L, e, KD_SKIP_MISSING_NAME);
        }
        if (!keep_kernel(L, e, kflags))
            return false;
    }
    if ((ci->flags & SF_CPU_OP_CAT) && (e->ext != KD_NOID || e->corr != KD_NOID)) {
        kd_cpu_op_rec op = {e->name, e->pid, e->tid, e->ts, e->dur, e->ext, e->corr};
        if (!KD_VEC_PUSH(L->t->cpu_ops, op))
            return false;
    }
    if (ci->flags & SF_PYFUNC_CAT) {
        kd_frame_rec fr = {e->name, e->pid, e->tid, e->ts, e->dur, e->complete};
        if (!KD_VEC_PUSH(L->t->frames, fr))
            return false;
    }
    if (e->corr != KD_NOID) {
        uint32_t lf = 0;
        if ((ci->flags & SF_KH_LAUNCH_CAT) && (ni->flags & SF_HAS_LAUNCH))
            lf |= KD_LF_KH;
        /* divergence D1: the launch test compares case-insensitively */
        if (e->complete && ((ci->flags & SF_RUNTIME_CAT) ? (ni->flags & SF_OH_LAUNCH_RT)
                                                         : (ni->flags & SF_OH_LAUNCH_ANY)))
            lf |= KD_LF_OH;
        if (lf) {
            kd_launch_rec la = {e->name, e->pid, e->tid, lf, e->ts, e->dur, e->corr, e->complete};
            if (!KD_VEC_PUSH(L->t->launches, la))
                return false;
        }
    }
    if (e->complete && (ci->flags & SF_STAGE_CAT)) {
        if (ni->stage >= 0) {
            kd_annotation_rec a = {e->ts, e->ts + e->dur, e->ext, (uint8_t)ni->stage,
                                   (ci->flags & SF_GPU_ANNOT) != 0};
            if (!KD_VEC_PUSH(L->t->annotations, a))
                return false;
        }
    }
    /* a step marker: a user annotation, or the cpu op of a 2021 export */
    if (e->complete && (ci->flags & (SF_STAGE_CAT | SF_LEGACY_OP_CAT))) {
        int64_t step = profiler_step_number(kd_str(L->t->strings, e->name));
        if (step >= 0) {
            kd_step_rec st = {step, (ci->flags & SF_GPU_ANNOT) != 0, e->ts, e->ts + e->dur};
            if (!KD_VEC_PUSH(L->t->profiler_steps, st))
                return false;
        }
    }
    return true;
}

static bool coerce_arg(kd_keeper *L, field_id id, int64_t *out)
{
    kd_jval v = as_jval(L, id);
    bool overflow = false;
    if (!kd_jval_coerce_int(&v, out, &overflow)) {
        *out = KD_NOID;
        if (overflow) {
            count_skip(L, KD_SKIP_INT_RANGE);
            return false;
        }
    }
    return true;
}

static bool keep_thread_name(kd_keeper *L, kd_sid pid, kd_sid tid)
{
    kd_jval n = as_jval(L, F_A_NAME);
    if (n.type == KD_J_ABSENT)
        return true;
    bool bad = false;
    kd_sid name = intern_pystr(L, &n, &bad);
    if (!bad && !name) {
        *L->status = KD_ENOMEM;
        return false;
    }
    if (bad || kd_str_len(L->t->strings, name) == 0)
        return true; /* str(args.name) empty: not recorded (reference §4) */
    kd_thread_name_rec r = {pid, tid, name};
    return KD_VEC_PUSH(L->t->thread_names, r);
}

/* ts and dur (the only fields read here): a number was stored untyped
 * (cb_number), so its type is settled only when the fast path declines. */
static bool read_time(kd_keeper *L, field_id id, double *out, bool *missing)
{
    kd_jval v = as_jval(L, id);
    *missing = v.type == KD_J_ABSENT || v.type == KD_J_NULL;
    if (*missing)
        return true;
    if (v.type == KD_J_INT) {
        if (kd_decimal_to_double(v.text, v.len, out))
            return true;
        v.type = kd_number_type(&v.text, &v.len);
    }
    return kd_jval_float(&v, out) && isfinite(*out);
}

/* Called at an event's closing brace: decide what of it to keep. */
static bool classify_event(kd_keeper *L)
{
    kd_trace *t = L->t;
    kd_jval args = as_jval(L, F_ARGS);
    if (args.type != KD_J_OBJECT && kd_jval_truthy(&args)) {
        count_skip(L, KD_SKIP_BAD_ARGS); /* the reference crashes on .get of non-dict args */
        return true;
    }
    int64_t ext, corr;
    if (!coerce_arg(L, F_A_EXT, &ext) || !coerce_arg(L, F_A_CORR, &corr))
        return true;
    if (ext != KD_NOID && corr != KD_NOID) {
        kd_corr_ext_rec ce = {corr, ext};
        if (!KD_VEC_PUSH(t->corr_ext, ce))
            return false;
    }
    kd_jval ph = as_jval(L, F_PH);
    bool is_x = ph.type == KD_J_STRING && ph.len == 1 && ph.text[0] == 'X';
    bool is_m = ph.type == KD_J_STRING && ph.len == 1 && ph.text[0] == 'M';
    if (!is_x && !is_m)
        return true;

    kd_jval name = as_jval(L, F_NAME), cat = as_jval(L, F_CAT);
    kd_jval pid = as_jval(L, F_PID), tid = as_jval(L, F_TID);
    bool bad = false;
    /* reference: event.get("name", "") and .get("cat", ""): absent is "" */
    kd_sid name_id = name.type == KD_J_ABSENT ? kd_intern(t->strings, "", 0)
                                              : intern_pystr(L, &name, &bad);
    kd_sid cat_id = cat.type == KD_J_ABSENT ? kd_intern(t->strings, "", 0)
                                            : intern_cached(L, 0, &cat, &bad);
    kd_sid pid_id = intern_cached(L, 1, &pid, &bad);
    kd_sid tid_id = intern_cached(L, 2, &tid, &bad);
    /* id 0 with no bad type: the interner ran out of memory */
    if (!bad && (!name_id || !cat_id || !pid_id || !tid_id))
        *L->status = KD_ENOMEM;
    if (*L->status)
        return false;
    if (bad) {
        count_skip(L, KD_SKIP_BAD_TYPE);
        return true;
    }
    if (is_m) {
        if (name.type == KD_J_STRING && strcmp(kd_str(t->strings, name_id), "thread_name") == 0)
            return keep_thread_name(L, pid_id, tid_id);
        return true;
    }

    t->complete_events++;
    event_view e = {name_id, cat_id, pid_id, tid_id, 0.0, 0.0, false, ext, corr, false, NULL, NULL};
    e.stream_marker = L->f[F_A_STREAM].type != KD_J_ABSENT ||
                      L->f[F_A_CUDA_STREAM].type != KD_J_ABSENT;
    sid_info *ni = info_of(L, name_id);
    if (!ni || (!(ni->flags & SF_NAME_DONE) && !fill_name_flags(L->rules, ni, kd_str(t->strings, name_id))))
        return false;
    sid_info *ci = info_of(L, cat_id);
    if (!ci || (!(ci->flags & SF_CAT_DONE) && !fill_cat_flags(ci, kd_str(t->strings, cat_id))))
        return false;
    e.ni = &L->info[name_id];
    e.ci = &L->info[cat_id];
    /* a malformed kernel is counted against its pid too (divergence D7) */
    bool ts_missing, dur_missing;
    if (!read_time(L, F_TS, &e.ts, &ts_missing) || ts_missing) {
        count_skip(L, KD_SKIP_BAD_TS); /* divergence D5 */
        return keep_skipped_kernel(L, &e, KD_SKIP_BAD_TS);
    }
    if (!read_time(L, F_DUR, &e.dur, &dur_missing)) {
        count_skip(L, KD_SKIP_BAD_DUR); /* divergence D5 */
        return keep_skipped_kernel(L, &e, KD_SKIP_BAD_DUR);
    }
    if (dur_missing)
        e.dur = 0.0;
    e.complete = !dur_missing && e.dur > 0;
    if (e.complete && e.ts + e.dur == e.ts) {
        count_skip(L, KD_SKIP_ZERO_EXTENT); /* divergence D4 */
        return keep_skipped_kernel(L, &e, KD_SKIP_ZERO_EXTENT);
    }
    if (!note_seen(L, cat_id, pid_id))
        return false;
    return keep_complete_event(L, &e);
}


/* ---- the keeper ------------------------------------------------------------ */

void kd_keeper_init(kd_keeper *k, kd_trace *t, const kd_rules *rules, kd_status *status)
{
    memset(k, 0, sizeof *k);
    k->t = t;
    k->rules = rules ? rules : kd_rules_reference();
    k->status = status;
    t->rules = k->rules;
}

void kd_keeper_free(kd_keeper *k)
{
    free(k->info);
    k->info = NULL;
    k->info_cap = 0;
}

bool kd_keep_event(kd_keeper *k, const field_val *f, const char *text)
{
    k->f = f;
    k->text = text;
    return classify_event(k);
}

void kd_keeper_forget(kd_keeper *k)
{
    kd_trace *t = k->t;
    /* the per-sid "seen" indexes point into the arrays being dropped */
    for (size_t i = 0; i < k->info_cap; i++)
        k->info[i].seen_cat = k->info[i].seen_pid = 0;
    t->kernels.n = t->cpu_ops.n = t->frames.n = t->launches.n = 0;
    t->annotations.n = t->thread_names.n = t->corr_ext.n = t->profiler_steps.n = 0;
    t->seen_cats.n = t->seen_cat_counts.n = t->seen_pids.n = 0;
    t->events_read = t->complete_events = 0;
    memset(t->skipped, 0, sizeof t->skipped);
}
