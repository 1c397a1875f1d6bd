import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Fuzz target for the resolution of a redirect's `Location` header and the origin check that
// decides whether credentials follow it.
//
// `FollowUp.redirectStep(after:of:bodyIsReplayable:policy:)` (Sources/Moya/ExchangeParts/FollowUp.swift)
// needs AsyncHTTPClient's types; its URL work is three expressions, which `resolve`
// below repeats word for word: `URL(string: location, relativeTo: current)?.absoluteURL`, the
// scheme check, and `URLOrigin.same(current, target)` (Sources/Moya/Model/URLOrigin.swift,
// compiled in). Keep `resolve` in step with redirectStep.
//
// Input: one byte, then the `Location` value (decoded as UTF-8). The byte chooses the request's
// URL among `currentURLs` when below 0x80; otherwise the input's first line is the request's URL
// (an input whose first line is not an HTTP(S) URL with a host is skipped) and the rest is the
// `Location`.
//
// Properties of every target followed:
// - it is an absolute `http` or `https` URL, and when it has a host, `absoluteString` parses
//   back to a URL with the same origin;
// - the request line's URI AsyncHTTPClient writes for it (the percent-encoded path and the
//   query) holds only visible ASCII, so that nothing can be added to the request line;
// - `URLOrigin.same` says "same origin" only when AsyncHTTPClient connects to the same scheme,
//   host (ASCII case aside) and port: credentials go to no other server; and it is symmetric;
// - a `Location` that is neither absolute (`scheme:`) nor network-path (`//`) does not leave the
//   request's origin, when the request's URL has one.

/// Request URLs the first byte chooses from.
private let currentURLs = [
    "https://api.example.com/v1/users/42?page=2",
    "http://api.example.com/",
    "https://API.Example.COM:443/a/b/c/",
    "http://127.0.0.1:8080/login",
    "https://[::1]:8443/x",
    "https://user:pass@example.org/path;params?q=1#fragment",
    "http://example.com:80",
    "https://xn--bcher-kva.example/%C3%A9t%C3%A9/?a=%20",
].map { URL(string: $0)! }

/// The target a redirect to `location` after a request for `current` is followed to, as
/// `FollowUp.redirectStep` computes it; `nil` when it is not followed.
private func resolve(_ location: String, against current: URL) -> URL? {
    guard let target = URL(string: location, relativeTo: current)?.absoluteURL,
        let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
    else {
        return nil
    }
    return target
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let input = inputBytes(data, size)
    let current: URL
    let location: String
    if input[0] < 0x80 {
        current = currentURLs[Int(input[0]) % currentURLs.count]
        location = String(decoding: input[1...], as: UTF8.self)
    } else {
        let rest = input[1...]
        let newline = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
        guard let url = URL(string: String(decoding: rest[..<newline], as: UTF8.self)), ConnectionTarget(url) != nil else { return 0 }
        current = url
        location = String(decoding: rest[min(newline + 1, rest.endIndex)...], as: UTF8.self)
    }
    guard let target = resolve(location, against: current) else { return 0 }
    noteShape(of: target, after: current, location: location)
    let context = "\(location.debugDescription) after \(current.absoluteString.debugDescription): \(target.absoluteString.debugDescription)"

    require(target.baseURL == nil, "not absolute: \(context)")
    // A target without a host (`http:path` after an `https` URL, which RFC 3986 resolves to
    // itself) is followed, and AsyncHTTPClient then refuses it with `emptyHost`: the request
    // fails instead of giving the redirect response. That is a clean error, and the fix belongs
    // in FollowUp.redirectStep (ExchangeParts), so it is not a failed property here; see Fuzz/README.md.
    guard let connection = ConnectionTarget(target) else { return 0 }
    checkRequestURI(target, context)
    let reparsed = URL(string: target.absoluteString)
    require(reparsed.flatMap(ConnectionTarget.init) == connection, "absoluteString parses to another origin: \(context)")

    let sameOrigin = URLOrigin.same(current, target)
    require(sameOrigin == URLOrigin.same(target, current), "same origin is not symmetric: \(context)")
    if sameOrigin {
        require(ConnectionTarget(current) == connection, "same origin, other server: \(context)")
    }
    // A request URL without an origin (a port beyond 65535, which no connection can have) has
    // no origin to stay in: credentials follow none of its redirects.
    if !startsWithSchemeOrAuthority(location), URLOrigin(current) != nil {
        require(sameOrigin, "a relative reference leaves the origin: \(context)")
    }
    return 0
}

/// Where AsyncHTTPClient connects for a URL (its `DeconstructedURL`): the scheme, the host
/// without the brackets of an IPv6 address, and the port or the scheme's default. Hosts compare
/// without ASCII case, as DNS names do.
private struct ConnectionTarget: Equatable {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", var host = url.host, !host.isEmpty else {
            return nil
        }
        if host.hasPrefix("[") { host.removeFirst() }
        if host.hasSuffix("]") { host.removeLast() }
        self.scheme = scheme
        self.host = String(decoding: host.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
        self.port = url.port ?? (scheme == "https" ? 443 : 80)
    }

    static func == (left: ConnectionTarget, right: ConnectionTarget) -> Bool {
        left.scheme == right.scheme && Array(left.host.utf8) == Array(right.host.utf8) && left.port == right.port
    }
}

/// Requires the request line AsyncHTTPClient writes for `url` to hold nothing that could end it:
/// its URI (`url.uri` there: the percent-encoded path, or `/`, then `?` and `url.query`) holds
/// only visible ASCII. (Nothing checks the URI after this point; the `Host` header AsyncHTTPClient
/// makes from `url.host` is checked by AsyncHTTPClient, which refuses control characters.)
private func checkRequestURI(_ url: URL, _ context: @autoclosure () -> String) {
    var uri = url.path.isEmpty ? "/" : (URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path)
    if let query = url.query {
        uri += "?" + query
    }
    require(uri.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "request URI \(uri.debugDescription) of \(context())")
}

/// Whether `reference` starts with `scheme ":"` (RFC 3986: a letter, then letters, digits, `+`,
/// `-` and `.`) or with `//`: only such references can name another server.
private func startsWithSchemeOrAuthority(_ reference: String) -> Bool {
    let bytes = Array(reference.utf8)
    if bytes.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) { return true }
    guard let first = bytes.first, isLetter(first) else { return false }
    for byte in bytes.dropFirst() {
        if byte == UInt8(ascii: ":") { return true }
        guard isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "+-.".utf8.contains(byte) else { return false }
    }
    return false
}

private func isLetter(_ byte: UInt8) -> Bool {
    (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
}

/// The sum of the shapes seen, kept so that the optimizer does not drop `noteShape`'s branches.
private nonisolated(unsafe) var shapes = 0

/// Branches on the shape of the target: libFuzzer sees no coverage inside Foundation's URL
/// parser, and these branches give it some, so that it keeps the inputs that reach new shapes.
private func noteShape(of target: URL, after current: URL, location: String) {
    var shape = 0
    if target.port != nil { shape += 1 }
    if target.query != nil { shape += 2 }
    if target.fragment != nil { shape += 3 }
    if target.user != nil { shape += 4 }
    if target.password != nil { shape += 5 }
    if target.host?.hasPrefix("[") == true { shape += 6 }
    if target.host?.contains("%") == true { shape += 7 }
    if target.host == nil { shape += 8 }
    if target.scheme != current.scheme { shape += 9 }
    if target.host != current.host { shape += 10 }
    if target.port != current.port { shape += 11 }
    if target.path.isEmpty { shape += 12 }
    if target.absoluteString.contains("%25") { shape += 13 }
    if target.absoluteString.utf8.count > location.utf8.count + 40 { shape += 14 }
    if location.hasPrefix("//") { shape += 15 }
    if location.hasPrefix("/") { shape += 16 }
    if location.contains("\\") { shape += 17 }
    if location.unicodeScalars.contains(where: { !$0.isASCII }) { shape += 18 }
    shapes &+= shape
}
