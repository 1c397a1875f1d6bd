import Foundation

extension NetworkLoggerPlugin.Configuration {
    /// Writes ``NetworkLoggerPlugin``'s entries and the bodies inside them.
    public struct Formatter: Sendable {
        /// Turns a body into text.
        public typealias DataFormatterType = @Sendable (Data) -> String

        /// Writes one entry from its identifier (`"Request"`, `"Response Body"`...), its message
        /// and the target.
        public typealias EntryFormatterType = @Sendable (_ identifier: String, _ message: String, _ target: TargetType) -> String

        /// Writes each entry.
        public var entry: EntryFormatterType

        /// Turns request bodies into text.
        public var requestData: DataFormatterType

        /// Turns response bodies into text.
        public var responseData: DataFormatterType

        /// Creates a formatter.
        ///
        /// - Parameters:
        ///   - entry:        Writes each entry; by default ``defaultEntryFormatter(identifier:message:target:)``.
        ///   - requestData:  Turns request bodies into text; by default ``defaultDataFormatter(_:)``.
        ///   - responseData: Turns response bodies into text; by default ``defaultDataFormatter(_:)``.
        public init(
            entry: @escaping EntryFormatterType = defaultEntryFormatter,
            requestData: @escaping DataFormatterType = defaultDataFormatter,
            responseData: @escaping DataFormatterType = defaultDataFormatter
        ) {
            self.entry = entry
            self.requestData = requestData
            self.responseData = responseData
        }

        /// The body as UTF-8 text, or `"## Cannot map data to String ##"` when it is not UTF-8.
        ///
        /// - Parameter data: The body.
        /// - Returns: Its text.
        public static func defaultDataFormatter(_ data: Data) -> String {
            String(data: data, encoding: .utf8) ?? "## Cannot map data to String ##"
        }

        /// `Moya_Logger: [<date>] <identifier>: <message>`, the date in the current locale's
        /// short date and time styles.
        ///
        /// - Parameters:
        ///   - identifier: What the entry is, such as `"Request"`.
        ///   - message:    Its content.
        ///   - target:     The target (unused).
        /// - Returns: The entry.
        public static func defaultEntryFormatter(identifier: String, message: String, target: TargetType) -> String {
            let date = defaultEntryDateFormatter.string(from: Date())
            return "Moya_Logger: [\(date)] \(identifier): \(message)"
        }

        /// `<identifier>: <message>`, for outputs that add their own time stamp, such as a
        /// swift-log `Logger`.
        ///
        /// - Parameters:
        ///   - identifier: What the entry is, such as `"Request"`.
        ///   - message:    Its content.
        ///   - target:     The target (unused).
        /// - Returns: The entry.
        public static func plainEntryFormatter(identifier: String, message: String, target: TargetType) -> String {
            "\(identifier): \(message)"
        }

        /// Short date and time styles in the current locale.
        static let defaultEntryDateFormatter: DateFormatter = {
            let formatter = DateFormatter()
            formatter.timeStyle = .short
            formatter.dateStyle = .short
            return formatter
        }()
    }
}
