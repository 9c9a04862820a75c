/* Fixture: an assembler file that goes through the preprocessor. */
#define ANSWER 43
	.text
	.globl	asm_pp_answer
	.type	asm_pp_answer, @function
asm_pp_answer:
	movl	$ANSWER, %eax
	ret
	.size	asm_pp_answer, .-asm_pp_answer
	.section	.note.GNU-stack,"",@progbits
