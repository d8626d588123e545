/* jsoncmp.h — compare two JSON trees under the conformance rule
 * (../shared/conformance/README.md): strings, integers, list order and key
 * sets exactly; floats within 1e-9 relative or 1e-6 absolute. Test-only:
 * the tree API is fine here, the loader never uses it. */
#ifndef KD_JSONCMP_H
#define KD_JSONCMP_H

#include <stdbool.h>
#include <stddef.h>
#include <yajl/yajl_tree.h>

typedef struct {
    /* When set, objects are compared on the actual document's keys only (each
     * must exist in the expected one): for outputs that are still partial. */
    bool actual_keys_only;
    char where[512]; /* JSON path of the first difference */
    char what[512];  /* what differs */
} kd_jsoncmp;

bool kd_json_equal(kd_jsoncmp *c, yajl_val expected, yajl_val actual);

/* Reads a whole file (gzip or plain) and parses it; NULL on failure (msg set). */
yajl_val kd_json_read_file(const char *path, char *msg, size_t msgsz);

/* Parses a buffer. */
yajl_val kd_json_parse_buf(const char *buf, char *msg, size_t msgsz);

/* Object member by key (NULL if absent or not an object). */
yajl_val kd_json_member(yajl_val obj, const char *key);

#endif
