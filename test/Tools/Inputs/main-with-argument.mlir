func.func @main(%n: index) {
  return
}
