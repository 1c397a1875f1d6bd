import Foundation

/// Why the proxy environment variable that applies to a request cannot be used.
///
/// It names the variable and what is wrong with its value, never the value itself: a proxy URL
/// can carry a user name and password.
struct ProxyEnvironmentError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
    /// What is wrong with the variable's value.
    enum Reason: Sendable, Equatable {
        /// The value is not of the form `[scheme://][user[:password]@]host[:port][/]`.
        case malformed
        /// The proxy's scheme is not `http`, `socks5` or `socks5h` (the scheme, in lower case).
        case unsupportedScheme(String)
        /// The host is missing, or is neither a host name nor an IP address.
        case invalidHost
        /// The port is not a number from 1 to 65535.
        case invalidPort
        /// The user name or password is not valid percent-encoded UTF-8, or holds a control
        /// character.
        case invalidCredentials
        /// A SOCKS proxy has credentials, which the transport cannot send.
        case socksCredentialsUnsupported
        /// Something follows the host and port other than a single `/`.
        case unexpectedPath
    }

    /// The environment variable the proxy was read from, such as `https_proxy`.
    let variable: String
    /// What is wrong with its value.
    let reason: Reason

    /// Says which variable is wrong and why, without its value, and what to do.
    var description: String {
        let why: String
        switch reason {
        case .malformed:
            why = "it is not of the form [scheme://][user[:password]@]host[:port]"
        case .unsupportedScheme(let scheme):
            why = "the proxy scheme \"\(scheme)\" is not supported (use http, socks5 or socks5h)"
        case .invalidHost:
            why = "its host is missing or invalid"
        case .invalidPort:
            why = "its port is not a number from 1 to 65535"
        case .invalidCredentials:
            why = "its user name or password is not valid percent-encoded text"
        case .socksCredentialsUnsupported:
            why = "SOCKS proxies with a user name or password are not supported"
        case .unexpectedPath:
            why = "only a \"/\" may follow the proxy's host and port"
        }
        return "The proxy in the environment variable \(variable) cannot be used: \(why). "
            + "Correct or unset \(variable), or set the session's proxy (Session.Configuration.proxy), which takes precedence over the environment."
    }

    /// Same as ``description``.
    var errorDescription: String? { description }
}
