/* Shared test machinery. Every test that touches Vulkan creates its context
 * through vkc_test_context_create(): validation and synchronization
 * validation on, and every WARNING or ERROR message of type VALIDATION or
 * PERFORMANCE counted. vkc_test_context_destroy() destroys the context (the
 * layer reports leaked objects at that point) and fails the test if any
 * such message arrived. */
#ifndef VKC_TEST_H
#define VKC_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the above first */
#include <cmocka.h>

#include "vkc/vkc.h"

/* The logger used by test contexts; counts validation messages. */
void vkc_test_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg);
/* Messages counted so far (WARNING/ERROR, VALIDATION/PERFORMANCE). */
unsigned vkc_test_validation_count(void);
void vkc_test_validation_reset(void);
/* 1: vkc's own error log lines are not printed (bad-input tests); 2: nor
 * its warnings (a recovery's report). Validation messages always are. */
void vkc_test_quiet_errors(int quiet);

/* A desc with validation on and the counting logger. */
vkc_context_desc vkc_test_desc(void);
/* Create with vkc_test_desc() after `tweak` (may be NULL) edited it. Fails
 * the test if creation fails or validation is not on. */
vkc_context *vkc_test_context_create(void (*tweak)(vkc_context_desc *));
/* Destroy and assert no validation message arrived. */
void vkc_test_context_destroy(vkc_context *ctx);
/* Assert no validation message so far. */
#define vkc_test_assert_clean()                                                                    \
    do {                                                                                           \
        if (vkc_test_validation_count() != 0)                                                      \
            fail_msg("%u validation message(s); see above", vkc_test_validation_count());          \
    } while (0)

/* cmocka group setup/teardown that keep one context in *state. */
int vkc_test_setup(void **state);
int vkc_test_teardown(void **state);

/* GLSL of x[i] = x[i] * a + b over n uints (push: uint n, a, b), grid-strided:
 * the kernel of the tests that compile at run time across contexts. */
extern const char *const vkc_test_axpb_glsl;
/* x[i] += 1 over push constant n uints (one binding). */
extern const char *const vkc_test_inc_glsl;

/* xorshift64* random numbers, fixed seeds. */
uint64_t vkc_test_rand(uint64_t *s);

#endif
