import Foundation

/// The request target (`uri`) split into path and query, with decoded query parameters.
struct RequestTarget: Sendable {
    /// The raw URI as received.
    let uri: String
    /// Everything before the first `?` (or `#`).
    let path: String
    /// Everything after the first `?` (without any fragment), or `nil` when there is no `?`.
    let query: String?
    /// Query parameters in order, percent-decoded, `+` decoded as space.
    let queryItems: [(name: String, value: String)]

    init(uri: String) {
        self.uri = uri
        var rest = Substring(uri)
        if let hash = rest.firstIndex(of: "#") {
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            self.path = String(rest[..<question])
            let query = String(rest[rest.index(after: question)...])
            self.query = query
            self.queryItems = query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = Self.decode(parts[0])
                let value = parts.count > 1 ? Self.decode(parts[1]) : ""
                return (name, value)
            }
        } else {
            self.path = String(rest)
            self.query = nil
            self.queryItems = []
        }
    }

    /// The path split into non-empty, percent-decoded segments.
    var pathSegments: [String] {
        self.path.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            String(segment).removingPercentEncoding ?? String(segment)
        }
    }

    /// The first value of the query parameter `name`, if present.
    func value(_ name: String) -> String? {
        self.queryItems.first { $0.name == name }?.value
    }

    /// The query parameter `name` parsed as an integer, `nil` when absent or not a number.
    func intValue(_ name: String) -> Int? {
        self.value(name).flatMap { Int($0) }
    }

    private static func decode(_ component: Substring) -> String {
        let plusDecoded = component.replacingOccurrences(of: "+", with: " ")
        return plusDecoded.removingPercentEncoding ?? plusDecoded
    }
}
