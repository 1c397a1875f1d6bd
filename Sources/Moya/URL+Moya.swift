import Foundation

extension URL {
    /// Creates the full URL of `target`: its `baseURL` with its `path` appended.
    ///
    /// An empty path returns `baseURL` untouched, query included. Otherwise the path is
    /// appended as a path component: a leading `/` does not double up, a query on the base URL
    /// stays after the new path, and characters such as `?`, spaces and `%` in the path are
    /// percent-encoded.
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
            self = baseURL.appendingPathComponent(path)
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
        return appendingPathString(path, to: baseURL) ?? baseURL.appendingPathComponent(path).absoluteString
    }

    /// `baseURL` with `path` appended as `appendingPathComponent` appends it, written directly
    /// as a string; `nil` when `baseURL` is not a plain absolute `http(s)` URL without query or
    /// fragment (a file URL, for one, makes Foundation look at the file system).
    ///
    /// One `/` joins the two: a trailing `/` on the base and a leading one on the path become a
    /// single `/`. The path is percent-encoded outside RFC 3986's path characters.
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
                return index
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.count + 1 + path.count * 3)
        bytes.append(contentsOf: base)
        if needsSlash { bytes.append(UInt8(ascii: "/")) }
        PercentEscaping.append(path, to: &bytes, allowed: .path)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `bytes` begin with the bytes of `prefix`.
    private static func starts(_ bytes: UnsafeBufferPointer<UInt8>, with prefix: StaticString) -> Bool {
        let count = prefix.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        let prefixBytes = UnsafeBufferPointer(start: prefix.utf8Start, count: count)
        return bytes.prefix(count).elementsEqual(prefixBytes)
    }
}
