/* What every sample needs beside vkc: stop on an error with vkc's message,
 * and a logger that prints validation messages (and counts them, so a
 * sample that triggers one exits non-zero). Only the public header. */
#ifndef VKC_SAMPLE_COMMON_H
#define VKC_SAMPLE_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif

#include <vkc/vkc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static vkc_context *sample_ctx; /* for CHECK's message */
static unsigned sample_validation_messages;

#define CHECK(call)                                                                                \
    do {                                                                                           \
        vkc_result r_ = (call);                                                                    \
        if (r_ < 0) {                                                                              \
            fprintf(stderr, "%s:%d: %s\n  %s\n", __FILE__, __LINE__, vkc_result_string(r_),        \
                    vkc_context_last_error(sample_ctx));                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline void sample_log(void *user, vkc_log_level level, vkc_log_id id, const char *msg)
{
    (void)user;
    if ((id == VKC_LOG_ID_VALIDATION || id == VKC_LOG_ID_PERFORMANCE) && level >= VKC_LOG_WARN) {
        sample_validation_messages++;
        fprintf(stderr, "vkc validation: %s\n", msg);
    } else if (level >= VKC_LOG_WARN) {
        fprintf(stderr, "vkc: %s\n", msg);
    }
}

/* A context on the best device, with the logger above. */
static inline vkc_context *sample_context(void)
{
    vkc_context_desc d = {0};
    d.logger.func = sample_log;
    vkc_result r = vkc_context_create(&d, &sample_ctx);
    if (r < 0) {
        fprintf(stderr, "no context: %s\n  %s\n", vkc_result_string(r), vkc_last_create_error());
        exit(1);
    }
    printf("device: %s\n", vkc_context_device(sample_ctx)->name);
    return sample_ctx;
}

static inline int sample_is_cpu(vkc_context *ctx)
{
    return vkc_context_device(ctx)->type == VKC_DEVICE_TYPE_CPU;
}

static inline double sample_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 0 when no validation message arrived. */
static inline int sample_validation_status(void)
{
    if (sample_validation_messages)
        fprintf(stderr, "%u validation message(s)\n", sample_validation_messages);
    return sample_validation_messages ? 1 : 0;
}

#ifdef PNG_LIBPNG_VER_STRING /* <png.h> was included first */
/* Write w x h RGBA8 pixels as a PNG (libpng's simplified API); 0 (with a
 * message) on failure. */
static inline int sample_write_png(const char *path, const void *rgba, uint32_t w, uint32_t h)
{
    png_image img;
    memset(&img, 0, sizeof(img));
    img.version = PNG_IMAGE_VERSION;
    img.width = w;
    img.height = h;
    img.format = PNG_FORMAT_RGBA;
    if (!png_image_write_to_file(&img, path, 0, rgba, 0, NULL)) {
        fprintf(stderr, "%s: %s\n", path, img.message);
        return 0;
    }
    return 1;
}
#endif

#endif
