// Package hostile replays attacks on yagent's policy as a hostile
// repository and a file-writing model would make them: real `yagent serve`
// and `yagent call` processes, real plugin processes behind them, one table
// per class of attack, and the everyday work that must still pass without
// an ask.
package hostile
