// The system's zlib for Moya's permessage-deflate (WebSocket compression). zlib's init functions
// are macros, which Swift cannot call: these inline functions call them.
#ifndef C_MOYA_ZLIB_H
#define C_MOYA_ZLIB_H

#include <zlib.h>

/// Starts a raw-deflate compressor (`windowBits` negative: no zlib header) at `level`.
static inline int CMoyaZlib_deflateInitRaw(z_streamp stream, int level, int windowBits, int memLevel) {
    return deflateInit2(stream, level, Z_DEFLATED, -windowBits, memLevel, Z_DEFAULT_STRATEGY);
}

/// Starts a raw-deflate decompressor with a window of `windowBits`.
static inline int CMoyaZlib_inflateInitRaw(z_streamp stream, int windowBits) {
    return inflateInit2(stream, -windowBits);
}

#endif
