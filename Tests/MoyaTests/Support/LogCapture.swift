import Foundation
import Moya

/// Collects what a `NetworkLoggerPlugin` outputs, batch by batch, from any thread.
final class LogCapture: @unchecked Sendable {
    // Sendable: all state behind `lock`.
    private let lock = NSLock()
    private var _batches: [[String]] = []
    private var _targets: [String] = []

    /// An output for `NetworkLoggerPlugin.Configuration` that records here.
    var output: NetworkLoggerPlugin.Configuration.OutputType {
        { [self] target, items in
            lock.withLock {
                _batches.append(items)
                _targets.append("\(target)")
            }
        }
    }

    /// Every batch, in order.
    var batches: [[String]] { lock.withLock { _batches } }

    /// The target of each batch, as text.
    var targets: [String] { lock.withLock { _targets } }

    /// Every entry, in order.
    var entries: [String] { batches.flatMap { $0 } }
}

/// An entry formatter without a date, so entries can be compared whole.
func bareEntry(identifier: String, message: String, target: TargetType) -> String {
    "\(identifier)|\(message)"
}

/// A configuration that records to `capture` with entries written `identifier|message`.
func capturing(
    _ capture: LogCapture,
    _ options: NetworkLoggerPlugin.Configuration.LogOptions,
    redaction: NetworkLoggerPlugin.Configuration.Redaction = .default
) -> NetworkLoggerPlugin.Configuration {
    NetworkLoggerPlugin.Configuration(
        formatter: .init(entry: bareEntry),
        output: capture.output,
        logOptions: options,
        redaction: redaction
    )
}
