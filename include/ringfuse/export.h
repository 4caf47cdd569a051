/// \file
/// What the shared library exports. It is built with hidden visibility, so that nothing of its
/// internals becomes part of the ABI; each public header wraps its declarations in
/// RINGFUSE_PUBLIC_BEGIN / RINGFUSE_PUBLIC_END, which give them default visibility.
#pragma once

/// Opens a region of declarations with default visibility.
#define RINGFUSE_PUBLIC_BEGIN _Pragma("GCC visibility push(default)")
/// Closes the region RINGFUSE_PUBLIC_BEGIN opened.
#define RINGFUSE_PUBLIC_END _Pragma("GCC visibility pop")
