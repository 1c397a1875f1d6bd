import CoreMetrics
import Foundation

/// Which request metrics a ``Session`` reports through swift-metrics:
/// ``Session/Configuration/metrics`` (``Session/Configuration/MetricsOptions`` is this type).
///
/// A session reports metrics when it is created with a metrics backend in place: the one
/// bootstrapped with `MetricsSystem.bootstrap(_:)`, or the one a task bound with
/// `withMetricsFactory(_:_:)` around the session's creation. The backend is read once, when
/// the session is created, so bootstrap it before you create your sessions and providers
/// (`MoyaProvider()` uses ``Session/default``, which is created on its first use). Without a
/// backend a session reports nothing and does no work for metrics at all.
///
/// The metrics, their units and their dimensions are described in <doc:Metrics>.
///
/// ```swift
/// // Name the target's case in every metric (`moya.target`):
/// let named = Session(configuration: .init(metrics: .init(includesTargetName: true)))
/// // No metrics from this session, whatever the backend:
/// let silent = Session(configuration: .init(metrics: .disabled))
/// ```
public struct SessionMetricsOptions: Sendable, Equatable {
    /// Whether the session reports metrics when a backend is in place. Default: `true`.
    public var isEnabled: Bool

    /// Whether the duration and body-size metrics carry the target's name in a
    /// `moya.target` dimension. Default: `false`.
    ///
    /// The name is the case of an enum target without its associated values (`userProfile`
    /// for `.userProfile("ann")`), or the type name of any other target, unless the target
    /// names itself (``NamedTarget/operationName``); a ``MultiTarget`` is named by the
    /// target it wraps. Turn it on only when your targets' case names are
    /// few and say nothing about your users: every name makes series of its own in the
    /// backend, and the names go wherever your metrics go.
    public var includesTargetName: Bool

    /// Options with the given values; by default metrics are on, without target names.
    public init(isEnabled: Bool = true, includesTargetName: Bool = false) {
        self.isEnabled = isEnabled
        self.includesTargetName = includesTargetName
    }

    /// Metrics on when a backend is in place, without target names.
    public static var `default`: SessionMetricsOptions { SessionMetricsOptions() }

    /// No metrics, whatever the backend.
    public static var disabled: SessionMetricsOptions { SessionMetricsOptions(isEnabled: false) }
}

extension SessionMetricsOptions {
    /// The backend these options record to now, or `nil` when they are disabled or no backend
    /// is in place: the task's (`withMetricsFactory(_:_:)`), or else the one bootstrapped in
    /// `MetricsSystem`. A session reads it once, when it is created, like its tracer.
    var currentFactory: (any MetricsFactory)? {
        guard isEnabled else { return nil }
        let factory = MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }
}
