/// The routes of ``BenchServer``, named by a request's path. Any method is accepted on each.
enum BenchRoute: Equatable {
    /// `/`: `200` with the body `ok` (what `MoyaBench --url` asks any server for).
    case root
    /// `/bytes/<n>`: `n` pattern bytes (byte `i` is `i % 251`), streamed.
    case bytes(Int)
    /// `/delay/<ms>`: `delayed`, after that many milliseconds.
    case delay(Int)
    /// `/echo`, `/echo/...`: a JSON description of the request.
    case echo
    /// `/upload`: counts the body's bytes as they arrive and answers how many.
    case upload
    /// `/response-headers[/...]?Name=value&...`: each query parameter as a response header.
    case responseHeaders
    /// Anything else: `404`.
    case notFound

    init(path: Substring) {
        let segments = path.split(separator: "/")
        switch (segments.first, segments.count) {
        case (nil, _): self = .root
        case ("bytes", 2): self = Int(segments[1]).map { $0 >= 0 ? .bytes($0) : .notFound } ?? .notFound
        case ("delay", 2): self = Int(segments[1]).map { $0 >= 0 ? .delay($0) : .notFound } ?? .notFound
        case ("echo", _): self = .echo
        case ("upload", 1): self = .upload
        case ("response-headers", _): self = .responseHeaders
        default: self = .notFound
        }
    }
}
