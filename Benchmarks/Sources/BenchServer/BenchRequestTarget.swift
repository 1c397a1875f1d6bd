import Foundation

/// A request's target (its URI) split into the route it names and its query parameters.
struct BenchRequestTarget {
    /// The route the path names.
    let route: BenchRoute
    /// The query parameters in order, percent-decoded, `+` decoded as a space.
    let queryItems: [(name: String, value: String)]

    init(uri: String) {
        var path = Substring(uri)
        var query: Substring = ""
        if let question = path.firstIndex(of: "?") {
            query = path[path.index(after: question)...]
            path = path[..<question]
        }
        if let hash = query.firstIndex(of: "#") {
            query = query[..<hash]
        }
        self.route = BenchRoute(path: path)
        self.queryItems = query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (Self.decode(parts[0]), parts.count > 1 ? Self.decode(parts[1]) : "")
        }
    }

    /// The first value of the query parameter `name`, if any.
    func value(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    private static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }
}
