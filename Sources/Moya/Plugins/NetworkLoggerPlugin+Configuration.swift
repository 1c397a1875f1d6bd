import Foundation
import Logging

extension NetworkLoggerPlugin {
    /// What ``NetworkLoggerPlugin`` logs, how it writes it and where it sends it.
    ///
    /// `Sendable`: its closures are `@Sendable`, so a configuration (and the plugin holding it)
    /// can be kept in a `static let` or shared between tasks.
    public struct Configuration: Sendable {
        /// Receives each batch of entries a hook produces, with the target they concern. It may
        /// be called from any thread.
        public typealias OutputType = @Sendable (_ target: TargetType, _ items: [String]) -> Void

        /// Writes entries and bodies.
        public var formatter: Formatter

        /// Where the entries go; ``defaultOutput(target:items:)`` prints them.
        public var output: OutputType

        /// What is logged.
        public var logOptions: LogOptions

        /// What is hidden: by default credentials in headers and cURL commands.
        public var redaction: Redaction

        /// How many of a streamed body's first bytes are logged: a request body sent from a file
        /// or a stream, and the body of a response read as it arrives (`provider.stream`, a
        /// generated OpenAPI client). 16 KiB by default. Bodies held whole are logged whole, as
        /// in Moya.
        public var streamedBodyLimit: Int = 16 * 1024

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - formatter:  Writes entries and bodies; by default as Moya does.
        ///   - output:     Where the entries go; by default printed, one per line.
        ///   - logOptions: What is logged; by default the request's method and headers.
        ///   - redaction:  What is hidden; by default credentials (see ``Redaction/default``).
        public init(
            formatter: Formatter = Formatter(),
            output: @escaping OutputType = defaultOutput,
            logOptions: LogOptions = .default,
            redaction: Redaction = .default
        ) {
            self.formatter = formatter
            self.output = output
            self.logOptions = logOptions
            self.redaction = redaction
        }

        /// Creates a configuration that logs to a swift-log `Logger`, one log message per entry.
        ///
        /// Entries are written by ``Formatter/plainEntryFormatter(identifier:message:target:)``
        /// (the logger adds its own time stamp), and each message carries the target in its
        /// `moya.target` metadata: by default its name only (see
        /// ``Redaction/redactsTargetDetails``).
        ///
        /// - Parameters:
        ///   - logger:     The logger.
        ///   - level:      The level of every message; `.info` by default.
        ///   - logOptions: What is logged; by default the request's method and headers.
        ///   - redaction:  What is hidden; by default credentials (see ``Redaction/default``).
        public init(logger: Logger, level: Logger.Level = .info, logOptions: LogOptions = .default, redaction: Redaction = .default) {
            self.init(
                formatter: Formatter(entry: Formatter.plainEntryFormatter),
                output: Self.loggerOutput(logger, level: level, redaction: redaction),
                logOptions: logOptions,
                redaction: redaction
            )
        }

        /// Prints each item on its own line (Moya's default output).
        ///
        /// - Parameters:
        ///   - target: The target the items concern (unused).
        ///   - items:  The entries to print.
        public static func defaultOutput(target: TargetType, items: [String]) {
            for item in items {
                print(item, separator: ",", terminator: "\n")
            }
        }

        /// An output that sends each item to `logger` as one message, with the target in its
        /// `moya.target` metadata.
        ///
        /// - Parameters:
        ///   - logger:    The logger.
        ///   - level:     The level of every message; `.info` by default.
        ///   - redaction: How the target is named in the metadata: by default its name only,
        ///     without associated values (see ``Redaction/redactsTargetDetails``).
        /// - Returns: An output for ``output``.
        public static func loggerOutput(_ logger: Logger, level: Logger.Level = .info, redaction: Redaction = .default) -> OutputType {
            return { target, items in
                let name = redaction.name(of: target)
                for item in items {
                    logger.log(level: level, "\(item)", metadata: ["moya.target": "\(name)"])
                }
            }
        }
    }
}
