// Invariant checks for core/ containers. Debian 12's abseil (20220623) has no absl/log, so these
// wrap abseil's raw logging: DASH_CHECK always aborts on failure, DASH_DCHECK only in debug builds
// (the condition is not evaluated in release builds).
// Thread: usable from any thread.
#pragma once

#include "absl/base/internal/raw_logging.h"

#define DASH_CHECK(cond) ABSL_RAW_CHECK(cond, #cond)

#ifdef NDEBUG
#define DASH_DCHECK(cond) static_cast<void>(sizeof((cond) ? 1 : 0))
#else
#define DASH_DCHECK(cond) ABSL_RAW_CHECK(cond, #cond)
#endif
