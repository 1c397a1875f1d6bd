import Foundation

/// What a session does with a redirect response (`301`, `302`, `303`, `307` or `308` with a
/// `Location`): ``Session/Configuration/redirectPolicy``, also named
/// `Session.Configuration.RedirectPolicy`.
///
/// The session follows redirects itself, hop by hop: each one is checked like the first
/// request (a `Location` with a port out of range fails with
/// ``RequestValidationError/invalidPort(_:)``), and only to `http` and `https` URLs.
public enum SessionRedirectPolicy: Sendable, Equatable {
    /// Follow up to `max` redirects; a cycle fails unless `allowCycles` is set.
    case follow(max: Int, allowCycles: Bool)
    /// Do not follow: the redirect response is the result.
    case disallow
}
