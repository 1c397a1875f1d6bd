/// Carries a value that is not `Sendable` (a user's completion closure, a plugin list, a target)
/// to the queue where Moya hands it back to the user.
///
/// Sendable: Moya only moves such values between the thread that called `request` and the
/// callback queue the user chose, and uses them from one place at a time; as in Moya, the
/// user's closures, plugins and targets are documented to be called from that queue.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}
