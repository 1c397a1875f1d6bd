#ifndef MOYA_TEST_HARNESS_H
#define MOYA_TEST_HARNESS_H

/// How many tests at once a run of the test bundle allows, as set when the bundle was loaded:
/// `SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH`, the caller's if it set one.
int moya_test_parallelization_width(void);

#endif
