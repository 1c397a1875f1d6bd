import AsyncHTTPClient
import Foundation
import NIOHTTP1
import NIOSSL

/// The AsyncHTTPClient requests a session made for the URLs and methods it sent recently, without
/// headers or body: the parsed URL they hold is what a new request for the same URL needs.
///
/// `HTTPClient.Request(url:)` takes the URL apart again (scheme, host, port, and the path and
/// query through `URLComponents`, which parses the whole string once more): about a third of what
/// the provider did for a small request before it was sent. Most programs send to a handful of
/// URLs again and again, so a session keeps that work for the URLs it saw last, and a new request
/// for one of them (with the same method, which AsyncHTTPClient's request holds as a constant) is
/// a copy with its own headers, body and TLS configuration set.
///
/// Bounded: at most ``capacity`` URL and method pairs, the oldest forgotten first (a
/// ``BoundedCache``), so that a program that sends to ever new URLs (an id in every path) holds
/// no more than that, and pays one look-up more per request than without the cache. A URL longer
/// than ``maximumURLLength`` (a server's redirect can name one) is never kept, so that the cache
/// holds at most 64 short URLs whoever chose them.
final class ClientRequestTemplates: Sendable {
    /// The most templates kept.
    static let capacity = 64

    /// The longest URL, in bytes, whose template is kept.
    static let maximumURLLength = 2048

    /// What a template is kept for.
    private struct Key: Hashable, Sendable {
        let url: URL
        /// The method's name (a constant string for the standard methods).
        let method: String
    }

    private let templates = BoundedCache<Key, HTTPClient.Request>(capacity: ClientRequestTemplates.capacity)

    init() {}

    /// A request for `url` with `method`, `headers`, `body` and `tlsConfiguration`: a copy of the
    /// template kept for `url` and `method`, or a new request whose template is then kept.
    ///
    /// - Throws: What `HTTPClient.Request(url:)` throws for a URL it cannot send to; nothing is
    ///   kept for such a URL.
    func request(
        for url: URL, method: HTTPMethod, headers: NIOHTTP1.HTTPHeaders, body: HTTPClient.Body?, tlsConfiguration: TLSConfiguration? = nil
    ) throws -> HTTPClient.Request {
        let key = Key(url: url, method: method.rawValue)
        var request: HTTPClient.Request
        if let template = templates.value(for: key) {
            request = template
        } else {
            // Parsed outside the lock; a second request for the same new URL may parse it too.
            request = try HTTPClient.Request(url: url, method: method)
            if url.absoluteString.utf8.count <= Self.maximumURLLength {
                templates.keep(request, for: key)
            }
        }
        request.headers = headers
        request.body = body
        request.tlsConfiguration = tlsConfiguration
        return request
    }

    /// How many templates are kept.
    var count: Int {
        templates.count
    }
}
