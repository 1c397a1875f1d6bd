import Foundation

/// A resilience setting that makes no sense (a ratio outside `0...1`, a limit of 0, a negative
/// delay), refused where it is written: the initializer of ``RetryBudget`` or ``CircuitBreaker``
/// throws it, naming the setting, its value and why it is refused.
public struct ResilienceSettingError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// The setting, as its initializer names it (`RetryBudget.ratio`).
    public let setting: String
    /// The value given, as text.
    public let value: String
    /// What the value must be.
    public let requirement: String

    /// An error for `setting`, whose `value` is not what `requirement` says.
    public init(setting: String, value: String, requirement: String) {
        self.setting = setting
        self.value = value
        self.requirement = requirement
    }

    /// "RetryBudget.ratio is 1.5: it must be between 0 and 1."
    public var description: String { "\(setting) is \(value): it must be \(requirement)." }

    /// The same as ``description``.
    public var errorDescription: String? { description }

    /// Checks that `value` is at least `minimum`.
    static func check(_ setting: String, _ value: Int, atLeast minimum: Int, requirement: String) throws(ResilienceSettingError) {
        guard value >= minimum else {
            throw ResilienceSettingError(setting: setting, value: "\(value)", requirement: requirement)
        }
    }

    /// Checks that `value` is a finite number in `range`.
    static func check(_ setting: String, _ value: Double, in range: ClosedRange<Double>, requirement: String) throws(ResilienceSettingError) {
        guard value.isFinite, range.contains(value) else {
            throw ResilienceSettingError(setting: setting, value: "\(value)", requirement: requirement)
        }
    }
}
