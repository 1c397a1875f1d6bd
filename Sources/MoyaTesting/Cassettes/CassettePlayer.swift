import Foundation
import Moya
import NIOConcurrencyHelpers

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers a provider's requests from a ``Cassette``, as stubs: nothing goes to the network,
/// and everything else runs as for a real request (the plugins' hooks, the target's validation,
/// the completion on its queue, the async and reactive APIs).
///
/// Give a provider the player's ``endpointClosure(_:)`` and ``stubClosure(_:)``, and the player
/// itself as its **last** plugin (its `prepare` sees the request as the other plugins made it):
///
/// ```swift
/// let player = try CassettePlayer(contentsOf: cassetteURL)
/// let provider = MoyaProvider<GitHub>(
///     endpointClosure: player.endpointClosure(),
///     stubClosure: player.stubClosure(),
///     plugins: [AccessTokenPlugin { _ in "token" }, player]
/// )
/// ```
///
/// or build the same provider in one line with
/// ``Moya/MoyaProvider/init(cassette:mode:matching:redaction:endpointClosure:callbackQueue:session:plugins:)``.
///
/// Each request is matched, as the plugins prepared it and with secrets hidden as when it was
/// recorded, against the interactions in order (see ``CassetteMatching``); the first match not
/// used yet answers with its recorded status, headers and body. A request nothing matches fails
/// with `MoyaError.underlying(CassetteError.noMatch(request:reason:), nil)`, whose description
/// names the closest interaction and how it differs.
///
/// How it works: the endpoint closure adds a header, `X-MoyaTesting-Cassette-Request`, that
/// the player's `prepare` reads and removes, to find the request again when the stub is due.
/// Plugins before the player see it in their `prepare`; nothing after it does. Without the
/// player among the plugins, requests are matched as the endpoint built them. Since each
/// endpoint carries its own number, `trackInflights` merges no requests while replaying.
///
/// Limitations: a download's file and a streamed body were never recorded (see
/// ``CassetteRecorder``), so a replayed download places no file and a replayed
/// `MoyaProvider.stream(_:options:)` delivers the recorded head with no body; the body of
/// an upload from a file or of a multipart form is not compared. The failure of an unmatched
/// request reaches the plugins' `didReceive` as an `NSError` (domain
/// `MoyaTesting.CassetteError`, with the same description) and becomes a ``CassetteError`` in
/// the player's `process`.
public final class CassettePlayer: PluginType, Sendable {
    /// The interactions replayed.
    public let cassette: Cassette

    /// How requests are matched with interactions.
    public let matching: CassetteMatching

    /// The redaction the cassette was recorded with: requests are hidden the same way before
    /// they are compared.
    public let redaction: NetworkLoggerPlugin.Configuration.Redaction

    /// The header that ties a request to its endpoint until the player's `prepare` removes it.
    static let requestHeader = "X-MoyaTesting-Cassette-Request"

    private struct State {
        /// How many times each interaction has answered.
        var uses: [Int]
        /// The next request number.
        var nextRequest = 0
        /// The requests the player's `prepare` saw, by number, until their stub is due.
        var prepared: [String: URLRequest] = [:]
    }

    private let state: NIOLockedValueBox<State>
    private let redactor: CassetteRedactor

    /// Creates a player.
    ///
    /// - Parameters:
    ///   - cassette:  The interactions to replay.
    ///   - matching:  How requests are matched with interactions; method, URL and body by
    ///     default, each interaction used once.
    ///   - redaction: The redaction the cassette was recorded with (the recorder's default,
    ///     the logger's `NetworkLoggerPlugin.Configuration.Redaction.default`, by
    ///     default).
    public init(
        cassette: Cassette,
        matching: CassetteMatching = .default,
        redaction: NetworkLoggerPlugin.Configuration.Redaction = .default
    ) {
        self.cassette = cassette
        self.matching = matching
        self.redaction = redaction
        self.redactor = CassetteRedactor(redaction)
        self.state = NIOLockedValueBox(State(uses: Array(repeating: 0, count: cassette.interactions.count)))
    }

    /// Creates a player for the cassette file at `url`.
    ///
    /// - Parameters:
    ///   - url:       The cassette file.
    ///   - matching:  How requests are matched with interactions.
    ///   - redaction: The redaction the cassette was recorded with.
    /// - Throws: ``CassetteError/missingFile(_:)``, ``CassetteError/malformed(file:reason:)`` or
    ///   ``CassetteError/unsupportedVersion(file:found:supported:)``.
    public convenience init(
        contentsOf url: URL,
        matching: CassetteMatching = .default,
        redaction: NetworkLoggerPlugin.Configuration.Redaction = .default
    ) throws {
        self.init(cassette: try Cassette(contentsOf: url), matching: matching, redaction: redaction)
    }

    /// An endpoint closure for the provider: `mapping`'s endpoints, answered from the cassette.
    ///
    /// - Parameter mapping: Maps targets to endpoints (URL, method, task, headers); Moya's
    ///   default mapping by default. Its sample responses are not used.
    /// - Returns: The closure to pass as the provider's `endpointClosure`.
    public func endpointClosure<Target: TargetType>(
        _ mapping: @escaping (Target) -> Endpoint = MoyaProvider<Target>.defaultEndpointMapping
    ) -> (Target) -> Endpoint {
        return { [self] target in
            let endpoint = mapping(target)
            let number = self.state.withLockedValue { state in
                state.nextRequest += 1
                return String(state.nextRequest)
            }
            return Endpoint(
                url: endpoint.url,
                sampleResponseClosure: { [self] in self.sampleResponse(number: number, endpoint: endpoint) },
                method: endpoint.method,
                task: endpoint.task,
                httpHeaderFields: (endpoint.httpHeaderFields ?? [:]).merging([Self.requestHeader: number]) { _, new in new },
                sampleConversation: WebSocketScript.deciding { [self] request in self.conversation(number: number, request: request) }
            )
        }
    }

    /// A stub closure for the provider: every target is stubbed.
    ///
    /// - Parameter behavior: How: `StubBehavior.immediate` (the default) or after a delay.
    /// - Returns: The closure to pass as the provider's `stubClosure`.
    public func stubClosure<Target: TargetType>(_ behavior: StubBehavior = .immediate) -> (Target) -> StubBehavior {
        return { _ in behavior == .never ? .immediate : behavior }
    }

    /// The interactions that have not answered any request yet, in order: after a test, an
    /// empty list shows that every recorded exchange was replayed.
    public var unusedInteractions: [CassetteInteraction] {
        let uses = self.state.withLockedValue { $0.uses }
        return zip(self.cassette.interactions, uses).filter { $0.1 == 0 }.map(\.0)
    }

    /// Finds the interaction that answers `request` and counts it as used.
    ///
    /// - Parameter request: The request, as the plugins prepared it.
    /// - Returns: The recorded interaction, or the reason none matches.
    public func interaction(for request: URLRequest) -> Result<CassetteInteraction, CassetteError> {
        let sent = self.redactor.request(request).0
        let interactions = self.cassette.interactions
        var matches: [Int] = []
        var closest: (index: Int, weight: Int, differences: [CassetteMatching.Difference])?
        for (index, interaction) in interactions.enumerated() {
            let differences = self.matching.differences(between: interaction.request, and: sent)
            if differences.isEmpty {
                matches.append(index)
                continue
            }
            let weight = differences.reduce(0) { $0 + $1.weight }
            if closest.map({ weight < $0.weight }) ?? true {
                closest = (index, weight, differences)
            }
        }
        let chosen: Int? = self.state.withLockedValue { state in
            let index = matches.first { state.uses[$0] == 0 } ?? (self.matching.reusesInteractions ? matches.last : nil)
            if let index { state.uses[index] += 1 }
            return index
        }
        if let chosen {
            return .success(interactions[chosen])
        }
        let name = "\(sent.method) \(sent.url)"
        let reason: String
        if let first = matches.first {
            let count = matches.count
            reason =
                "\(count == 1 ? "The interaction" : "All \(count) interactions") recorded for it (#\(first + 1)\(count > 1 ? " and later" : ""))"
                + " already answered: each answers once, in order; record the request again or use CassetteMatching(reusesInteractions: true)."
        } else if let closest {
            let interaction = interactions[closest.index]
            reason =
                "The closest is #\(closest.index + 1) of \(interactions.count), \(interaction.request.method) \(interaction.request.url), which differs: "
                + closest.differences.map(\.text).joined(separator: "; ") + "."
        } else {
            reason = "The cassette is empty."
        }
        return .failure(.noMatch(request: name, reason: reason))
    }

    /// The answer to the request numbered `number`, built from `endpoint`.
    private func sampleResponse(number: String, endpoint: Endpoint) -> EndpointSampleResponse {
        let prepared = self.state.withLockedValue { $0.prepared.removeValue(forKey: number) }
        guard var request = prepared ?? (try? endpoint.urlRequest()) else {
            return .networkError(CassetteError.noMatch(request: endpoint.url, reason: "Its URLRequest cannot be built.").bridged)
        }
        request.setValue(nil, forHTTPHeaderField: Self.requestHeader)
        switch self.interaction(for: request) {
        case .success(let interaction):
            let recorded = interaction.response
            let url = request.url ?? URL(string: interaction.request.url) ?? URL(fileURLWithPath: "/")
            guard let response = HTTPURLResponse(url: url, statusCode: recorded.status, httpVersion: "HTTP/1.1", headerFields: recorded.headers) else {
                return .networkResponse(recorded.status, recorded.body?.data ?? Data())
            }
            return .response(response, recorded.body?.data ?? Data())
        case .failure(let error):
            return .networkError(error.bridged)
        }
    }

    /// The script that replays the WebSocket handshake numbered `number`: the recorded
    /// conversation after a recorded `101`, the recorded refusal, or the failure to match.
    private func conversation(number: String, request: URLRequest) -> WebSocketScript {
        var request = self.state.withLockedValue { $0.prepared.removeValue(forKey: number) } ?? request
        request.setValue(nil, forHTTPHeaderField: Self.requestHeader)
        switch self.interaction(for: request) {
        case .success(let interaction):
            let recorded = interaction.response
            guard recorded.status == 101 else {
                return .refusal(statusCode: recorded.status, data: recorded.body?.data ?? Data(), headers: recorded.headers)
            }
            // The upgrade's own headers are the handshake's to make again; the rest is replayed.
            let own: Set<String> = ["upgrade", "connection", "sec-websocket-accept", "sec-websocket-protocol", "sec-websocket-extensions"]
            let subprotocol = recorded.headers.first { $0.key.lowercased() == "sec-websocket-protocol" }?.value
            let headers = recorded.headers.filter { !own.contains($0.key.lowercased()) }
            let events = interaction.webSocket ?? []
            return WebSocketScript(handshake: .accept(subprotocol: subprotocol, headers: headers)) { peer in
                try await Self.replay(events, on: peer)
            }
        case .failure(let error):
            return WebSocketScript(handshake: .fail(error.bridged)) { _ in }
        }
    }

    /// Plays a recorded conversation's server: sends what the client received, waits for each
    /// message the client sent (its content is not compared), and ends as the recording did:
    /// closes when the server closed first, drops the connection when it was lost, and
    /// otherwise waits for the client to close.
    static func replay(_ events: [CassetteWebSocketEvent], on peer: WebSocketPeer) async throws {
        for event in events {
            switch event.event {
            case .received:
                if let message = event.message { try await peer.send(message) }
            case .sent:
                guard try await peer.receive() != nil else { return }
            case .closed:
                let code = WebSocketCloseCode(rawValue: event.code ?? WebSocketCloseCode.normalClosure.rawValue)
                if code == .abnormalClosure {
                    await peer.commit(.drop)
                    return
                }
                if event.byServer == true {
                    await peer.close(code: code, reason: event.reason ?? "")
                    return
                }
                while try await peer.receive() != nil {}
                return
            }
        }
        while try await peer.receive() != nil {}
    }

    // MARK: - PluginType

    /// Removes the player's header from the request and keeps the request, as the plugins
    /// before the player prepared it, for the stub.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - target:  Its target.
    /// - Returns: The request without the player's header.
    public func prepare(_ request: URLRequest, target: TargetType) -> URLRequest {
        guard let number = request.value(forHTTPHeaderField: Self.requestHeader) else { return request }
        var request = request
        request.setValue(nil, forHTTPHeaderField: Self.requestHeader)
        self.state.withLockedValue { $0.prepared[number] = request }
        return request
    }

    /// Turns the `NSError` of an unmatched request back into its ``CassetteError``.
    ///
    /// - Parameters:
    ///   - result: The result.
    ///   - target: Its target.
    /// - Returns: `result`, with `MoyaError.underlying(CassetteError, nil)` for an unmatched
    ///   request.
    public func process(_ result: Result<Moya.Response, MoyaError>, target: TargetType) -> Result<Moya.Response, MoyaError> {
        if case .failure(.underlying(let error, let response)) = result,
            let cassetteError = (error as NSError).userInfo[CassetteError.userInfoKey] as? CassetteError
        {
            return .failure(.underlying(cassetteError, response))
        }
        return result
    }
}
