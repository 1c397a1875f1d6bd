import Foundation
import NIOCore
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransportError {
    /// What a request connects to: its server, or the proxy it goes through.
    struct Endpoint: Equatable {
        /// The host name or IP address.
        let host: String
        /// The port.
        let port: Int
        /// Whether it is a proxy rather than the request's server.
        let isProxy: Bool

        /// `host:port`, with an IPv6 address in brackets.
        var address: String {
            host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }

        /// "127.0.0.1:8080", or "the proxy 127.0.0.1:3128".
        var name: String {
            isProxy ? "the proxy \(address)" : address
        }
    }

    /// A connection that could not be opened, as a `URLError(.cannotConnectToHost)` that names
    /// the endpoint and says why in words (the system's message, not NIO's description), with
    /// the original error under `NSUnderlyingErrorKey`; `nil` for any other error.
    ///
    /// A `NIOConnectionError` (a host name was resolved and each of its addresses tried) names
    /// the host and port itself; a bare `IOError` (an IP address was connected to) does not, so
    /// `endpoint` says what was connected to. A connection is refused when nothing listens on
    /// the port, or a firewall rejects it.
    ///
    /// - Parameters:
    ///   - error:    The failure.
    ///   - endpoint: What the request connected to, when known.
    static func connectionFailure(_ error: any Error, endpoint: Endpoint?) -> URLError? {
        if let connectionError = error as? NIOConnectionError {
            // A failed name resolution is translated as such (`cannotFindHost`).
            if connectionError.dnsAError != nil, connectionError.dnsAAAAError != nil, connectionError.connectionErrors.isEmpty {
                return nil
            }
            let reached = Endpoint(host: connectionError.host, port: connectionError.port, isProxy: endpoint?.isProxy ?? false)
            let codes = connectionError.connectionErrors.compactMap { ($0.error as? IOError)?.errnoCode }
            if codes.contains(ECONNREFUSED) {
                return refused(reached, error)
            }
            let messages = Set(codes.map { ErrorText.systemMessage(errno: Int($0)) }).sorted()
            let why = messages.isEmpty ? "" : ": \(messages.joined(separator: "; "))"
            let advice = "Check that the host and port are right and that the network reaches them."
            // The advice is in the description too, where a user reads first
            // (`localizedDescription`, a log line), as it is for a TLS failure.
            return urlError(.cannotConnectToHost, "Could not connect to \(reached.name)\(why). \(advice)", reason: advice, error)
        }
        if let ioError = error as? IOError, ioError.errnoCode == ECONNREFUSED {
            return refused(endpoint, error)
        }
        return nil
    }

    /// The error for a connection to `endpoint` that was refused.
    private static func refused(_ endpoint: Endpoint?, _ error: any Error) -> URLError {
        let target = endpoint?.name ?? "the server"
        let what = endpoint?.isProxy == true ? "proxy" : "server"
        let advice =
            "Nothing is listening on that port, or a firewall rejected the connection: check that the \(what) is running "
            + "and that the host and port are right."
        return urlError(.cannotConnectToHost, "Could not connect to \(target): the connection was refused. \(advice)", reason: advice, error)
    }

    /// A `URLError` with a description, a failure reason and the original error.
    static func urlError(_ code: URLError.Code, _ description: String, reason: String, _ underlying: any Error) -> URLError {
        URLError(
            code,
            userInfo: [
                NSLocalizedDescriptionKey: description,
                NSLocalizedFailureReasonErrorKey: reason,
                NSUnderlyingErrorKey: underlying,
            ])
    }
}
