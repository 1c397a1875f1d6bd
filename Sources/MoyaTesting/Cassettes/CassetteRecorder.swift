import Foundation
import Moya
import NIOConcurrencyHelpers

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plugin that records every exchange of a provider into a cassette file, secrets hidden,
/// for ``CassettePlayer`` to replay.
///
/// ```swift
/// let recorder = CassetteRecorder(fileURL: cassetteURL)
/// let provider = MoyaProvider<GitHub>(plugins: [recorder])
/// ```
///
/// Each exchange is recorded when its result arrives (``didReceive(_:target:)``): the request
/// as it was sent, after every plugin's `prepare` (`Response.request`), and the response with
/// its status, headers and body, whether validation accepted it or not. The file is written
/// again after each exchange, atomically (a temporary file renamed over it), so there is
/// nothing to save at the end and a crash never leaves half a file. A new recorder starts with
/// an empty cassette: the file it replaces is gone at the first exchange.
///
/// Secrets never reach the file: they are hidden by the code that hides them in the log of
/// `NetworkLoggerPlugin`, with the rules of a `NetworkLoggerPlugin.Configuration.Redaction` (by
/// default the logger's `NetworkLoggerPlugin.Configuration.Redaction.default`: `Authorization`,
/// `Proxy-Authorization`, `Cookie` and `Set-Cookie` headers, URL passwords, and parameters such
/// as `token`, `password` or `api_key` in queries, forms and JSON bodies), and each value
/// hidden that way is hidden wherever else it occurs, such as a token a server echoes in its
/// body. Add your own names with the redaction's `redacting(headers:)` and
/// `redacting(parameters:)`, and replay with the same redaction. A secret the rules cannot
/// recognize (in a path, in a binary body, under a field name of your own) is recorded as it
/// is: read a new cassette before committing it.
///
/// What is not recorded: failures without a response (a timeout, a refused connection, a
/// cancel); the body of a download (it went to a file) and of a streamed response; the body of
/// an upload from a file or of a multipart form (the `URLRequest` does not hold them), and the
/// headers the session adds to every request. Redirects are not recorded one by one: the
/// request is recorded with the final response.
///
/// The recorder is safe to use from any thread: its state sits behind one lock, under which
/// the file is also written, so the interactions are in the order their results arrived.
public final class CassetteRecorder: PluginType, Sendable {
    /// The cassette file.
    public let fileURL: URL

    /// The rules secrets are hidden with.
    public let redaction: NetworkLoggerPlugin.Configuration.Redaction

    /// Whether each interaction carries the date it was recorded (`recordedAt`).
    public let recordsDates: Bool

    private struct State {
        var cassette = Cassette()
        var lastError: CassetteError?
        /// The WebSocket conversations recorded: by handshake (kept, so that its identity is not
        /// reused), where its interaction is and the secrets of its handshake.
        var conversations: [ObjectIdentifier: (handshake: Moya.Response, index: Int, secrets: [String])] = [:]
    }

    private let state = NIOLockedValueBox(State())
    private let redactor: CassetteRedactor

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - fileURL:      The cassette file, replaced at the first exchange; missing
    ///     directories are created.
    ///   - redaction:    The rules secrets are hidden with; the logger's
    ///     `NetworkLoggerPlugin.Configuration.Redaction.default` by default.
    ///   - recordsDates: Whether each interaction carries the date it was recorded; `true` by
    ///     default. Without dates, recording the same exchanges again writes the same file.
    public init(
        fileURL: URL,
        redaction: NetworkLoggerPlugin.Configuration.Redaction = .default,
        recordsDates: Bool = true
    ) {
        self.fileURL = fileURL
        self.redaction = redaction
        self.recordsDates = recordsDates
        self.redactor = CassetteRedactor(redaction)
    }

    /// The interactions recorded so far.
    public var cassette: Cassette {
        self.state.withLockedValue { $0.cassette }
    }

    /// Why the file could not be written the last time it was, or `nil` when it was. A plugin
    /// cannot throw, so check this after recording.
    public var lastError: CassetteError? {
        self.state.withLockedValue { $0.lastError }
    }

    /// Records the exchange, when there is a response, and writes the file.
    ///
    /// - Parameters:
    ///   - result: The result of the request.
    ///   - target: Its target.
    public func didReceive(_ result: Result<Moya.Response, MoyaError>, target: TargetType) {
        let response: Moya.Response
        switch result {
        case .success(let success):
            response = success
        case .failure(let error):
            guard let failure = error.response else { return }
            response = failure
        }
        guard let request = response.request else { return }
        // A WebSocket handshake is recorded with its conversation, from its `opened` event.
        if response.statusCode == 101 { return }
        let date = self.recordsDates ? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) : nil
        let interaction = self.redactor.interaction(request: request, response: response, recordedAt: date)
        self.state.withLockedValue { state in
            state.cassette.interactions.append(interaction)
            self.write(&state)
        }
    }

    /// Writes the cassette in `state` to the file (under the lock).
    private func write(_ state: inout State) {
        do {
            try state.cassette.write(to: self.fileURL)
            state.lastError = nil
        } catch {
            state.lastError = error as? CassetteError ?? .writeFailed(file: self.fileURL.path, reason: "\(error)")
        }
    }
}

extension CassetteRecorder: WebSocketPluginType {
    /// Records a WebSocket conversation: its handshake when the connection opens (the `101`
    /// with its request), then each message sent and received, and the end, in
    /// ``CassetteInteraction/webSocket``. The file is written when the connection opens, when
    /// it ends, and for each message that comes after the end (a message the reader took once
    /// the connection had closed goes before the end). Secrets found in the handshake are
    /// hidden in the messages too; nothing else in a message is (see the type's discussion).
    ///
    /// - Parameters:
    ///   - event:     What happened.
    ///   - handshake: The connection's `101`.
    ///   - target:    The connection's target.
    public func webSocket(_ event: WebSocketEvent, handshake: Moya.Response, target: TargetType) {
        let key = ObjectIdentifier(handshake)
        let replacement = self.redaction.replacement
        self.state.withLockedValue { state in
            if case .opened = event {
                guard let request = handshake.request else { return }
                let date = self.recordsDates ? Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down)) : nil
                var interaction = self.redactor.interaction(request: request, response: handshake, recordedAt: date)
                interaction.webSocket = []
                state.conversations[key] = (handshake, state.cassette.interactions.count, self.redactor.request(request).secrets)
                state.cassette.interactions.append(interaction)
                self.write(&state)
                return
            }
            guard let conversation = state.conversations[key], conversation.index < state.cassette.interactions.count else { return }
            var events = state.cassette.interactions[conversation.index].webSocket ?? []
            let ended = events.last?.event == .closed
            let recorded: CassetteWebSocketEvent
            switch event {
            case .opened:
                return
            case .sent(let message), .received(let message):
                let hidden: WebSocketMessage
                switch message {
                case .text(let text): hidden = .text(CassetteRedactor.scrub(text, secrets: conversation.secrets, replacement: replacement))
                case .binary(let data): hidden = .binary(CassetteRedactor.scrub(data, secrets: conversation.secrets, replacement: replacement))
                }
                if case .sent = event {
                    recorded = CassetteWebSocketEvent(.sent, message: hidden)
                } else {
                    recorded = CassetteWebSocketEvent(.received, message: hidden)
                }
            case .closed(let end):
                recorded = CassetteWebSocketEvent(closedWith: end.code, reason: end.reason, byServer: end.serverClosedFirst)
            }
            if ended {
                events.insert(recorded, at: events.count - 1)
            } else {
                events.append(recorded)
            }
            state.cassette.interactions[conversation.index].webSocket = events
            if ended || recorded.event == .closed {
                self.write(&state)
            }
        }
    }
}
