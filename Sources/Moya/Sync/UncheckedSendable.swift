/// Carries a value that is not `Sendable` (a user's completion closure, a plugin list, a target)
/// to the queue where Moya hands it back to the user. Visible to the modules of this package,
/// whose reactive wrappers carry targets and observers into tasks the same way.
///
/// Sendable: Moya only moves such values between the thread that called `request` and the
/// callback queue the user chose, and uses them from one place at a time; as in Moya, the
/// user's closures, plugins and targets are documented to be called from that queue. Each use
/// elsewhere says why it is safe there.
package struct UncheckedSendable<Value>: @unchecked Sendable {
    package let value: Value

    package init(_ value: Value) {
        self.value = value
    }
}
