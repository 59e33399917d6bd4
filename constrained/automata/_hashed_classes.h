/* Byte classes from per-byte hashes, shared by the C parts that number byte classes: bytes are
 * grouped by a 64-bit hash of what tells them apart, and a byte joins a class only when
 * ``alike(ctx, rep, b)`` confirms it against the class's first byte (so a collision never
 * merges two classes). Classes are numbered by first byte: cls[b] is b's class, reps[c] the
 * first byte of class c; returns the number of classes. Open addressing over 512 slots (never
 * full): linear in 256. */
#ifndef CONSTRAINED_HASHED_CLASSES_H
#define CONSTRAINED_HASHED_CLASSES_H

#include <stdint.h>

typedef int (*alike_fn)(const void *ctx, int rep, int b);

static int classes_from_hashes(const uint64_t *h, alike_fn alike, const void *ctx,
                               int32_t *cls, int32_t *reps) {
    int16_t slot[512];
    for (int i = 0; i < 512; i++) slot[i] = -1;
    int n = 0;
    for (int b = 0; b < 256; b++) {
        int c = -1;
        int i = (int)(h[b] >> 55);
        for (; slot[i] >= 0; i = (i + 1) & 511) {
            int rb = reps[slot[i]];
            if (h[rb] == h[b] && alike(ctx, rb, b)) {
                c = slot[i];
                break;
            }
        }
        if (c < 0) {
            c = n++;
            reps[c] = b;
            slot[i] = (int16_t)c;
        }
        cls[b] = c;
    }
    return n;
}

#endif
