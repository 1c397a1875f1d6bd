import Foundation
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebSocketSink {
    /// Answers the handshake `request` of a stubbed target with `script`'s handshake: a failure,
    /// a refusal (a response that is not `101`), or an acceptance, which opens the script's
    /// connection (``WebSocketStubLink``), offers it here, and completes with the `101`. The
    /// script's server sees the handshake's own fields (``WebSocketHandshake``), without a key,
    /// and its answer is checked as a server's is.
    ///
    /// - Parameters:
    ///   - script:     What the stubbed server does (resolved for this request).
    ///   - request:    The handshake's request, as the plugins prepared it.
    ///   - routes:     The session's routes: the connection is registered so that a shutdown
    ///     closes it.
    ///   - completion: Called once, with the `101` or the failure.
    func answerStub(
        _ script: WebSocketScript, request: URLRequest, routes: SessionRoutes,
        completion: @escaping @Sendable (Result<Response, MoyaError>) -> Void
    ) {
        let url = request.url ?? URL(fileURLWithPath: "/")
        switch script.handshake {
        case .fail(let error):
            completion(.failure(.underlying(error, nil)))
        case .refuse(let statusCode, let data, let headers):
            let answer = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: headers)
            let response = Response(statusCode: statusCode, data: data, request: request, response: answer)
            // Only a 101 opens a connection, whatever the target's validation says.
            completion(statusCode == 101 ? .failure(.underlying(Self.stubRefusalIs101, response)) : .failure(.statusCode(response)))
        case .accept(let subprotocol, let headers):
            let chosen: String?
            do {
                chosen = try WebSocketHandshake.chosenSubprotocol(subprotocol.map { [$0] } ?? [], offered: options.subprotocols, by: "the script")
            } catch {
                completion(.failure(.underlying(error, nil)))
                return
            }
            var fields = headers
            for (name, value) in WebSocketHandshake.upgradeFields {
                fields[name] = value
            }
            if let chosen { fields["Sec-WebSocket-Protocol"] = chosen }
            let answer = HTTPURLResponse(url: url, statusCode: 101, httpVersion: "HTTP/1.1", headerFields: fields)
            let response = Response(statusCode: 101, data: Data(), request: request, response: answer)
            var handshake = request
            for (name, value) in WebSocketHandshake.upgradeFields + [WebSocketHandshake.versionField] {
                handshake.setValue(value, forHTTPHeaderField: name)
            }
            let offers = WebSocketHandshake.offers(
                options, requestNamesSubprotocol: handshake.value(forHTTPHeaderField: "Sec-WebSocket-Protocol") != nil, offersCompression: false)
            for (name, value) in offers {
                handshake.setValue(value, forHTTPHeaderField: name)
            }
            let options = self.options
            let observer = self.observer
            WebSocketStubLink.open(script, request: handshake, options: options, subprotocol: chosen, on: MultiThreadedEventLoopGroup.singleton.next())
                .whenComplete { opened in
                    switch opened {
                    case .success(let (channel, parts)):
                        _ = routes.openConnections.register(channel)
                        self.offer(WebSocketConnection(response: response, parts: parts, options: options, channel: channel, observer: observer))
                        completion(.success(response))
                    case .failure(let error):
                        completion(.failure(.underlying(error, nil)))
                    }
                }
        }
    }

    /// The error of a script that refused its handshake with `101`.
    static var stubRefusalIs101: WebSocketError {
        .handshakeFailed(reason: "the script refused the handshake with 101, which accepts it; use WebSocketScript.Handshake.accept")
    }
}
