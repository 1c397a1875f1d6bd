import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// A WebSocket task for `url`, with the shape of `URLSession.webSocketTask(with:protocols:)`:
    /// nothing is sent until ``WebSocketTask/resume()``.
    ///
    /// - Parameters:
    ///   - url:       A `ws`, `wss`, `http` or `https` URL.
    ///   - protocols: The subprotocols to offer.
    public func webSocketTask(with url: URL, protocols: [String] = []) -> WebSocketTask {
        WebSocketTask(session: self, request: URLRequest(url: url), protocols: protocols)
    }

    /// A WebSocket task for `request` (its URL and headers), with the shape of
    /// `URLSession.webSocketTask(with:)`: nothing is sent until ``WebSocketTask/resume()``.
    public func webSocketTask(with request: URLRequest) -> WebSocketTask {
        WebSocketTask(session: self, request: request, protocols: [])
    }
}
