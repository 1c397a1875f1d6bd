import Foundation

extension NetworkLoggerPlugin.Configuration {
    /// What ``NetworkLoggerPlugin`` logs.
    public struct LogOptions: OptionSet, Sendable {
        /// The options' bits.
        public let rawValue: Int

        /// Creates options from their bits.
        ///
        /// - Parameter rawValue: The bits, as in the static options.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// The request's HTTP method, as the `HTTP Request Method` entry.
        public static let requestMethod = LogOptions(rawValue: 1 << 0)

        /// The request's body, as the `Request Body` entry (and `Request Body Stream`).
        public static let requestBody = LogOptions(rawValue: 1 << 1)

        /// The request's headers, session headers included, as the `Request Headers` entry.
        public static let requestHeaders = LogOptions(rawValue: 1 << 2)

        /// The request as one cURL command, instead of the separate request entries.
        public static let formatRequestAscURL = LogOptions(rawValue: 1 << 3)

        /// The body of successful responses, as the `Response Body` entry.
        public static let successResponseBody = LogOptions(rawValue: 1 << 4)

        /// The body of responses that failed (validation), as the `Response Body` entry.
        public static let errorResponseBody = LogOptions(rawValue: 1 << 5)

        /// The request's method and headers.
        public static let `default`: LogOptions = [requestMethod, requestHeaders]

        /// The request's method, headers and body, and the response body whether it succeeded
        /// or not. Not the cURL form.
        public static let verbose: LogOptions = [requestMethod, requestHeaders, requestBody, successResponseBody, errorResponseBody]
    }
}
