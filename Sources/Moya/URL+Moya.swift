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
        let base = baseURL.absoluteString
        guard base.utf8.starts(with: "https://".utf8) || base.utf8.starts(with: "http://".utf8),
              !base.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return nil }

        let baseEndsWithSlash = base.utf8.last == UInt8(ascii: "/")
        var pathBytes = path.utf8[...]
        var needsSlash = false
        if pathBytes.first == UInt8(ascii: "/") {
            if baseEndsWithSlash { pathBytes = pathBytes.dropFirst() }
        } else if !baseEndsWithSlash {
            needsSlash = true
        }
        // The common case, a path with nothing to escape: two appends to one string.
        if pathBytes.allSatisfy({ PercentEscaping.Allowed.path.contains($0) }) {
            var string = base
            string.reserveCapacity(base.utf8.count + pathBytes.count + 1)
            if needsSlash { string.append("/") }
            string.append(contentsOf: Substring(pathBytes))
            return string
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(base.utf8.count + path.utf8.count + 8)
        bytes.append(contentsOf: base.utf8)
        if needsSlash { bytes.append(UInt8(ascii: "/")) }
        PercentEscaping.append(pathBytes, to: &bytes, allowed: .path)
        return String(decoding: bytes, as: UTF8.self)
    }
}
