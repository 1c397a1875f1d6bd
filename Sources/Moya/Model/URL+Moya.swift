import Foundation

extension URL {
    /// Creates the full URL of `target`: its `baseURL` with its `path` appended.
    ///
    /// An empty path returns `baseURL` untouched, query included. Otherwise the path is
    /// appended as a path component: a leading `/` does not double up, a query on the base URL
    /// stays after the new path, and characters such as `?`, spaces and `%` in the path are
    /// percent-encoded.
    ///
    /// Dot segments in the resulting path are then resolved as RFC 3986 (section 5.2.4) says, as a
    /// browser or `URL(string:relativeTo:)` would: `.` is dropped, and `..` drops the segment
    /// before it, so that `/v1` and `/users/../admin` give `/v1/admin`. `..` never climbs above
    /// the root: `/v1` and `/../../admin` give `/admin`. Only a segment that is exactly `.` or
    /// `..` counts: `.well-known` and percent-encoded dots (`%2E%2E`) are data and are sent as
    /// they are. (Moya 15 sends dot segments unresolved; servers and proxies then disagree
    /// about which resource is meant.)
    ///
    /// - Parameter target: The target whose URL to build.
    public init<T: TargetType>(target: T) {
        let path = target.path
        let baseURL = target.baseURL
        if path.isEmpty {
            self = baseURL
        } else if let string = URL.appendingPathString(path, to: baseURL), let url = URL(string: string) {
            self = url
        } else {
            self = URL.removingDotSegments(from: baseURL.appendingPathComponent(path))
        }
    }

    /// The `absoluteString` of ``init(target:)``'s URL, without parsing it when it can be
    /// written directly (an `http` or `https` base URL without query or fragment, the common
    /// case). The provider parses the request's URL once, after the query is added.
    static func string<T: TargetType>(for target: T) -> String {
        let path = target.path
        let baseURL = target.baseURL
        if path.isEmpty {
            return baseURL.absoluteString
        }
        return appendingPathString(path, to: baseURL) ?? removingDotSegments(from: baseURL.appendingPathComponent(path)).absoluteString
    }

    /// `url` with the dot segments of its path removed (``DotSegments``); `url` itself when
    /// there are none. For the URLs that ``appendingPathString(_:to:)`` does not write.
    private static func removingDotSegments(from url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
            DotSegments.contains(in: components.percentEncodedPath)
        else {
            return url
        }
        components.percentEncodedPath = DotSegments.removing(from: components.percentEncodedPath)
        return components.url ?? url
    }

    /// `baseURL` with `path` appended as `appendingPathComponent` appends it, written directly
    /// as a string; `nil` when `baseURL` is not a plain absolute `http(s)` URL without query or
    /// fragment (a file URL, for one, makes Foundation look at the file system).
    ///
    /// One `/` joins the two: a trailing `/` on the base and a leading one on the path become a
    /// single `/`. The path is percent-encoded outside RFC 3986's path characters. Dot segments
    /// in the result's path are removed (``DotSegments``): one scan of the path finds none in
    /// the common case.
    private static func appendingPathString(_ path: String, to baseURL: URL) -> String? {
        guard baseURL.baseURL == nil else { return nil }
        var base = baseURL.absoluteString
        var path = path
        // Scanned as contiguous UTF-8: `String.UTF8View`'s generic sequence algorithms walk
        // string indices byte by byte, which made this the costliest step of building a request.
        return base.withUTF8 { baseBytes in
            path.withUTF8 { pathBytes in
                appendingPath(pathBytes, to: baseBytes)
            }
        }
    }

    private static func appendingPath(_ path: UnsafeBufferPointer<UInt8>, to base: UnsafeBufferPointer<UInt8>) -> String? {
        // `absoluteString` writes the scheme in lower case.
        guard starts(base, with: "http://") || starts(base, with: "https://"),
            !base.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return nil }
        // Where the authority starts, after `http://` or `https://`.
        let authorityStart = base[4] == UInt8(ascii: "s") ? 8 : 7
        let baseEndsWithSlash = base.last == UInt8(ascii: "/")
        var path = path[...]
        var needsSlash = false
        if path.first == UInt8(ascii: "/") {
            if baseEndsWithSlash { path = path.dropFirst() }
        } else if !baseEndsWithSlash {
            needsSlash = true
        }
        if path.allSatisfy({ PercentEscaping.Allowed.path.contains($0) }) {
            // The common case, a path with nothing to escape: written once into a string of the
            // exact size.
            let count = base.count + (needsSlash ? 1 : 0) + path.count
            return String(unsafeUninitializedCapacity: count) { buffer in
                var index = buffer.initialize(fromContentsOf: base)
                if needsSlash {
                    buffer[index] = UInt8(ascii: "/")
                    index += 1
                }
                index = buffer[index...].initialize(fromContentsOf: path)
                return removingDotSegments(in: buffer, authorityStart: authorityStart, count: index)
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.count + 1 + path.count * 3)
        bytes.append(contentsOf: base)
        if needsSlash { bytes.append(UInt8(ascii: "/")) }
        PercentEscaping.append(path, to: &bytes, allowed: .path)
        let count = bytes.withUnsafeMutableBufferPointer { buffer in
            removingDotSegments(in: buffer, authorityStart: authorityStart, count: buffer.count)
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Removes the dot segments of the path of the URL in `bytes[..<count]`, in place, when it
    /// has any; returns the new count. `authorityStart` is where the URL's authority starts.
    ///
    /// The scan starts at the authority, which has no `/`, so the path's start is only looked
    /// for when there is something to remove. (A host such as `..` would be taken for a dot
    /// segment; the removal then starts at the path, and finds nothing to remove.)
    private static func removingDotSegments(in bytes: UnsafeMutableBufferPointer<UInt8>, authorityStart: Int, count: Int) -> Int {
        guard DotSegments.contains(UnsafeBufferPointer(rebasing: bytes[..<count]), from: authorityStart),
            let pathStart = bytes[authorityStart..<count].firstIndex(of: UInt8(ascii: "/"))
        else {
            return count
        }
        return DotSegments.remove(in: bytes, from: pathStart, count: count)
    }

    /// Whether `bytes` begin with the bytes of `prefix`.
    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
        return bytes.prefix(count).elementsEqual(prefixBytes)
    }
}
