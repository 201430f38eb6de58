// NXRT_API marks what libnxrt exports: the classes and functions of its
// public C++ API (the headers core/include/nxrt holds, and the graph and
// status headers they include). Everything else in libnxrt is built with
// hidden visibility, so a program cannot come to depend on internals.
#pragma once

#define NXRT_API [[gnu::visibility("default")]]
