/// Dot segments (`.` and `..`) in a URL's path, and their removal as RFC 3986 (section 5.2.4,
/// `remove_dot_segments`) describes it.
///
/// A segment is a dot segment only when it is exactly `.` or `..`: `.well-known`, `..x` and
/// percent-encoded dots (`%2E`, `%2E%2E`) are data, and stay as they are. `..` removes the
/// segment before it, never more than the path has: it cannot climb above the root.
enum DotSegments {
    /// Whether `bytes[start...]` has a dot segment: a `.` or `..` between a `/` at or after
    /// `start` and the next `/` or the end. `start` is where the path begins (its first `/`), or
    /// any earlier point that has no `/` before the path.
    static func contains(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var index = start
        let end = bytes.count
        while index < end {
            // A dot segment starts right after a `/`; most paths have no `.` at all.
            if bytes[index] == UInt8(ascii: "."), index > start, bytes[index - 1] == UInt8(ascii: "/") {
                let next = index + 1
                if next == end || bytes[next] == UInt8(ascii: "/") {
                    return true
                }
                if bytes[next] == UInt8(ascii: "."), next + 1 == end || bytes[next + 1] == UInt8(ascii: "/") {
                    return true
                }
            }
            index += 1
        }
        return false
    }

    /// Removes the dot segments of the absolute path in `bytes[start..<count]`, in place, and
    /// returns the new end of the bytes (the path only ever gets shorter). `bytes[start]` must
    /// be `/`.
    ///
    /// Each segment, with its leading `/`, is copied down unless it is a dot segment: `.` is
    /// dropped, `..` also drops the segment written before it. When the last segment is a dot
    /// segment the path keeps a trailing `/` (`/a/b/..` is `/a/`).
    static func remove(in bytes: UnsafeMutableBufferPointer<UInt8>, from start: Int, count end: Int) -> Int {
        var read = start
        var write = start
        while read < end {
            // `bytes[read]` is the `/` in front of a segment.
            var segmentEnd = read + 1
            while segmentEnd < end, bytes[segmentEnd] != UInt8(ascii: "/") {
                segmentEnd += 1
            }
            let length = segmentEnd - read - 1
            let isDot = length == 1 && bytes[read + 1] == UInt8(ascii: ".")
            let isDotDot = length == 2 && bytes[read + 1] == UInt8(ascii: ".") && bytes[read + 2] == UInt8(ascii: ".")
            if isDot || isDotDot {
                if isDotDot {
                    // Back to the `/` in front of the last segment written.
                    while write > start {
                        write -= 1
                        if bytes[write] == UInt8(ascii: "/") { break }
                    }
                }
                if segmentEnd == end {
                    bytes[write] = UInt8(ascii: "/")
                    write += 1
                }
            } else {
                // Copied down, front to back: `write` never passes `read`.
                for index in read..<segmentEnd {
                    bytes[write] = bytes[index]
                    write += 1
                }
            }
            read = segmentEnd
        }
        return write
    }

    /// `path` (percent-encoded, absolute) without its dot segments.
    static func removing(from path: String) -> String {
        var bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return path }
        let count = bytes.withUnsafeMutableBufferPointer { buffer in
            remove(in: buffer, from: 0, count: buffer.count)
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Whether the absolute `path` has a dot segment.
    static func contains(in path: String) -> Bool {
        var path = path
        return path.withUTF8 { contains($0, from: 0) }
    }
}
