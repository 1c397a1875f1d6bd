// Bounds how many tests a plain `swift test` runs at once, before Swift Testing reads its
// settings.
//
// On Linux, Swift's tasks run on Dispatch's global queues, with as many threads as cores. Swift
// Testing starts every test at once: on two cores, 1,450 of them queued seconds of work ahead of
// any task that became ready, so a request's continuation waited up to 5 s for a thread in an
// idle run, and on a machine ten times slower (the test process held to a fifth of one core)
// its requests outlasted their 60 s timeouts and dozens of tests failed. With eight tests a
// core at once, the same slow machine passes the whole suite, and an idle run takes as long as
// before.
//
// Swift Testing reads the width from this variable when its run starts, after the bundle's
// constructors have run. A width the caller set is kept (CI's ThreadSanitizer run sets 4).
// The variable is Swift Testing's own, marked experimental: should a later toolchain drop it,
// the tests run all at once again, as they did before.

#include "MoyaTestHarness.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *const widthVariable = "SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH";

__attribute__((constructor)) static void moya_bound_test_parallelization(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) {
        cores = 1;
    }
    char width[32];
    snprintf(width, sizeof width, "%ld", cores * 8);
    setenv(widthVariable, width, 0);
}

int moya_test_parallelization_width(void) {
    const char *width = getenv(widthVariable);
    return width ? atoi(width) : 0;
}
