/* Extra C functions exported by libep_mock.so for tests: the call log each
 * mock EP instance writes (under its `log` option) and counts of the objects
 * the mock has alive. Tests reach them by loading the same library again
 * (boost::dll or dlopen) and looking the names up. */
#ifndef NXRT_MOCK_API_H_
#define NXRT_MOCK_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copies the calls logged under `log_id` so far, one per line (each ending in
 * '\n'), oldest first, into `buffer` (NUL-terminated, truncated to
 * `capacity`; `buffer` may be NULL when `capacity` is 0). Returns the length
 * of the whole log, without the NUL, so a caller can size its buffer. */
typedef size_t (*nxrt_mock_call_log_fn)(const char* log_id, char* buffer, size_t capacity);
#define NXRT_MOCK_CALL_LOG_SYMBOL "nxrt_mock_call_log"

/* Forgets the calls logged under `log_id`. */
typedef void (*nxrt_mock_clear_call_log_fn)(const char* log_id);
#define NXRT_MOCK_CLEAR_CALL_LOG_SYMBOL "nxrt_mock_clear_call_log"

/* How many objects of a kind are alive in the mock: "ep", "kernel",
 * "shared_state" or "graph"; -1 for another kind. */
typedef int64_t (*nxrt_mock_live_count_fn)(const char* kind);
#define NXRT_MOCK_LIVE_COUNT_SYMBOL "nxrt_mock_live_count"

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NXRT_MOCK_API_H_ */
