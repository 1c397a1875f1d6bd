import Foundation
import Moya

extension MoyaProvider {
    /// Creates a provider that records its exchanges into the cassette file at `url`, or
    /// answers from it, as `mode` says.
    ///
    /// Recording, the provider sends real requests, with a ``CassetteRecorder`` after
    /// `plugins`. Replaying, it stubs every request with a ``CassettePlayer`` (its endpoint and
    /// stub closures, and the player after `plugins`), and nothing goes to the network.
    ///
    /// ```swift
    /// let provider = try MoyaProvider<GitHub>(cassette: cassetteURL, mode: .fromEnvironment())
    /// ```
    ///
    /// The recorder or player is the provider's last plugin: `provider.plugins.last as?
    /// CassettePlayer` reaches it, for ``CassettePlayer/unusedInteractions`` for example.
    ///
    /// - Parameters:
    ///   - url:             The cassette file.
    ///   - mode:            Whether to record or replay.
    ///   - matching:        How a replayed request is matched with a recorded one; method, URL
    ///     and body by default, each interaction used once.
    ///   - redaction:       The rules secrets are hidden with, recording and replaying alike;
    ///     the logger's default by default.
    ///   - endpointClosure: Maps targets to endpoints; Moya's default by default.
    ///   - callbackQueue:   Where completions run; `nil` for the main queue.
    ///   - session:         The transport, when recording.
    ///   - plugins:         The provider's own plugins, run before the recorder or player.
    /// - Throws: When replaying: ``CassetteError/missingFile(_:)``,
    ///   ``CassetteError/malformed(file:reason:)`` or
    ///   ``CassetteError/unsupportedVersion(file:found:supported:)``.
    public convenience init(
        cassette url: URL,
        mode: CassetteMode,
        matching: CassetteMatching = .default,
        redaction: NetworkLoggerPlugin.Configuration.Redaction = .default,
        endpointClosure: @escaping EndpointClosure = MoyaProvider.defaultEndpointMapping,
        callbackQueue: DispatchQueue? = nil,
        session: Session = MoyaProvider<Target>.defaultAlamofireSession(),
        plugins: [PluginType] = []
    ) throws {
        if mode.records(url) {
            let recorder = CassetteRecorder(fileURL: url, redaction: redaction)
            self.init(endpointClosure: endpointClosure, callbackQueue: callbackQueue, session: session, plugins: plugins + [recorder])
        } else {
            let player = try CassettePlayer(contentsOf: url, matching: matching, redaction: redaction)
            self.init(
                endpointClosure: player.endpointClosure(endpointClosure),
                stubClosure: player.stubClosure(),
                callbackQueue: callbackQueue,
                session: session,
                plugins: plugins + [player]
            )
        }
    }
}
